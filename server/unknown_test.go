package server

import (
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestPredictUnknown: with the model's calibrated rejection (the default,
// Unknown "auto"), a predict answers "unknown" exactly for the samples
// whose top score is below the threshold saved in the model file, keeps
// the top classes and their scores, gives the probability softmax(s/T) of
// the saved temperature, and counts the answers in /metrics; samples of a
// class never taught (a cluster in another direction) are rejected.
// Unknown "off" rejects nothing; a bad value is refused by New.
func TestPredictUnknown(t *testing.T) {
	_, hs, path := testServer(t, nil)
	r := rand.New(rand.NewPCG(21, 22))
	x, y := clusters(r, []int{0, 1, 2}, 90)
	learnFeatures(t, hs.URL, "", x, y)
	rej := savedModel(t, path).Rejection()
	if !rej.Enabled() || rej.Score != "top" || !(rej.Temperature > 0) {
		t.Fatalf("the served model's rejection after a learn: %+v", rej)
	}
	known, _ := clusters(r, []int{0, 1, 2}, 60)
	unknown, _ := clusters(r, []int{4, 5}, 20)
	var pr PredictResponse
	code, _, b := do(t, "POST", hs.URL+"/v1/predict", "application/json", jsonBody(t, Request{Features: append(known, unknown...), Top: 3}), "", &pr)
	if code != http.StatusOK {
		t.Fatalf("predict: %d %s", code, b)
	}
	nUnknown, keptKnown := 0, 0
	for i, p := range pr.Predictions {
		want := float64(p.Top[0].Score) < rej.Threshold
		if p.Unknown != want || (p.Answer == "unknown") != want || (!want && p.Answer != p.Class) || p.Class != p.Top[0].Class {
			t.Fatalf("prediction %d: %+v, threshold %g", i, p, rej.Threshold)
		}
		s := 0.0
		for _, sc := range p.Top {
			s += math.Exp((float64(sc.Score) - float64(p.Top[0].Score)) / rej.Temperature)
		}
		if p.Probability == nil || math.Abs(*p.Probability-1/s) > 1e-12 {
			t.Fatalf("prediction %d: probability %v, want softmax %g", i, p.Probability, 1/s)
		}
		if p.Unknown {
			nUnknown++
		} else if i < len(known) {
			keptKnown++
		}
		if i >= len(known) && !p.Unknown {
			t.Errorf("sample %d of an untaught class answered %s (top score %g, threshold %g)", i, p.Answer, p.Top[0].Score, rej.Threshold)
		}
	}
	if keptKnown < len(known)*3/4 {
		t.Errorf("only %d of %d samples of taught classes kept", keptKnown, len(known))
	}
	_, _, m := do(t, "GET", hs.URL+"/metrics", "", nil, "", nil)
	for _, want := range []string{
		`flycl_predictions_total{answer="known"} ` + strconv.Itoa(len(pr.Predictions)-nUnknown),
		`flycl_predictions_total{answer="unknown"} ` + strconv.Itoa(nUnknown),
	} {
		if !strings.Contains(string(m), want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}

	_, off, _ := testServer(t, func(c *Config) { c.Unknown = "off" })
	learnFeatures(t, off.URL, "", x, y)
	pr = PredictResponse{}
	do(t, "POST", off.URL+"/v1/predict", "application/json", jsonBody(t, Request{Features: unknown}), "", &pr)
	for i, p := range pr.Predictions {
		if p.Unknown || p.Answer != p.Class || p.Probability == nil {
			t.Fatalf("Unknown off: prediction %d %+v", i, p)
		}
	}
	if _, err := New(Config{Backend: newFileBackend(t, t.TempDir()+"/x.flycl"), Unknown: "maybe"}); err == nil || !strings.Contains(err.Error(), "maybe") {
		t.Errorf("Unknown \"maybe\": %v", err)
	}
}
