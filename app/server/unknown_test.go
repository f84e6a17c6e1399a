package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/flycl/flycl/reject"
)

// TestPredictUnknown: with the model's calibrated rejection (the default
// score, top+cosine, and Unknown "auto"), a predict answers "unknown"
// exactly for the samples the root package's Rejection.Reject rejects,
// from the predictor's scores and cosines of the model saved in the file,
// keeps the top classes and their scores, gives the probability
// softmax(s/T) of the saved temperature, and counts the answers in
// /metrics; samples of a class never taught (a cluster in another
// direction) are rejected, most of the taught ones kept. The answers are
// the same whether requests are scored alone or batched together.
// Unknown "off" rejects nothing; a bad value is refused by New.
func TestPredictUnknown(t *testing.T) {
	_, hs, path := testServer(t, nil)
	r := rand.New(rand.NewPCG(21, 22))
	x, y := clusters(r, []int{0, 1, 2}, 90)
	learnFeatures(t, hs.URL, "", x, y)
	saved := savedModel(t, path)
	rej := saved.Model.Rejection()
	if !rej.Enabled() || rej.Score != reject.ScoreTopCosine || !(rej.Temperature > 0) {
		t.Fatalf("the served model's rejection after a learn: %+v", rej)
	}
	known, _ := clusters(r, []int{0, 1, 2}, 60)
	unknown, _ := clusters(r, []int{4, 5}, 20)
	all := append(slices.Clone(known), unknown...)
	var flat []float32
	for _, v := range all {
		flat = append(flat, v...)
	}
	sc, cos, err := saved.Model.Predictor().ScoresCosines(context.Background(), flat)
	if err != nil {
		t.Fatal(err)
	}
	var pr PredictResponse
	code, _, b := do(t, "POST", hs.URL+"/v1/predict", "application/json", jsonBody(t, Request{Features: all, Top: 3}), "", &pr)
	if code != http.StatusOK {
		t.Fatalf("predict: %d %s", code, b)
	}
	// the same inputs one at a time, concurrently: the server batches
	// them, and must answer each as alone
	alone := make([]Prediction, len(pr.Predictions))
	errs := make([]error, len(alone))
	var wg sync.WaitGroup
	for i := range alone {
		body := jsonBody(t, Request{Features: all[i : i+1], Top: 3})
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := http.Post(hs.URL+"/v1/predict", "application/json", bytes.NewReader(body))
			if err != nil {
				errs[i] = err
				return
			}
			defer res.Body.Close()
			var one PredictResponse
			if err := json.NewDecoder(res.Body).Decode(&one); err != nil || len(one.Predictions) != 1 {
				errs[i] = fmt.Errorf("status %d, %d predictions, %v", res.StatusCode, len(one.Predictions), err)
				return
			}
			alone[i] = one.Predictions[0]
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	nc := saved.Model.Classes().Len()
	nUnknown, keptKnown := 0, 0
	for i, p := range pr.Predictions {
		want := rej.Reject(sc[i*nc:(i+1)*nc], cos[i])
		if p.Unknown != want || (p.Answer == "unknown") != want || (!want && p.Answer != p.Class) || p.Class != p.Top[0].Class {
			t.Fatalf("prediction %d: %+v, root package's decision %v (value %g, threshold %g)", i, p, want, rej.Value(sc[i*nc:(i+1)*nc], cos[i]), rej.Threshold)
		}
		if alone[i].Unknown != p.Unknown || alone[i].Answer != p.Answer {
			t.Fatalf("prediction %d: %+v alone, %+v in one request", i, alone[i], p)
		}
		s := 0.0
		for _, sc := range p.Top {
			s += math.Exp((float64(sc.Score) - float64(p.Top[0].Score)) / rej.Temperature)
		}
		if p.Probability == nil || math.Abs(*p.Probability-1/s) > 1e-12 {
			t.Fatalf("prediction %d: probability %v, want softmax %g", i, p.Probability, 1/s)
		}
		if v := rej.Value(sc[i*nc:(i+1)*nc], cos[i]); p.Margin == nil || *p.Margin != v-rej.Threshold || (*p.Margin < 0) != p.Unknown {
			t.Fatalf("prediction %d: unknown_margin %v, want %g − %g", i, p.Margin, v, rej.Threshold)
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
		// every input twice: in one request and alone
		`flycl_predictions_total{answer="known"} ` + strconv.Itoa(2*(len(pr.Predictions)-nUnknown)),
		`flycl_predictions_total{answer="unknown"} ` + strconv.Itoa(2*nUnknown),
	} {
		if !strings.Contains(string(m), want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}

	// GET /v1/model shows the rejection predictions get
	var mi ModelResponse
	do(t, "GET", hs.URL+"/v1/model", "", nil, "", &mi)
	wantInfo := Unknown{Enabled: true, Score: string(reject.ScoreTopCosine), Threshold: rej.Threshold, Keep: reject.DefaultKeep,
		Guaranteed: reject.GuaranteedKeep(rej.Samples, reject.DefaultKeep), Samples: rej.Samples, Temperature: rej.Temperature, Summary: rej.String()}
	if mi.Unknown != nil { // in words: TestTypicalityOverHTTP
		wantInfo.InWords, wantInfo.UnknownShare = mi.Unknown.InWords, mi.Unknown.UnknownShare
	}
	if mi.Unknown == nil || *mi.Unknown != wantInfo || rej.Samples != 90 {
		t.Fatalf("GET /v1/model unknown %+v, want %+v (90 samples)", mi.Unknown, wantInfo)
	}

	_, off, _ := testServer(t, func(c *Config) { c.Unknown = "off" })
	learnFeatures(t, off.URL, "", x, y)
	mi = ModelResponse{}
	do(t, "GET", off.URL+"/v1/model", "", nil, "", &mi)
	if mi.Unknown == nil || mi.Unknown.Enabled || !strings.HasPrefix(mi.Unknown.Summary, "unknown off") {
		t.Fatalf("Unknown off: GET /v1/model unknown %+v", mi.Unknown)
	}
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
