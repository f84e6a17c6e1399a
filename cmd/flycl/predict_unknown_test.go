package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/answer"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/reject"
)

// TestPredictUnknown: flycl learn calibrates the model's rejection (on
// top+cosine by default, on the top score with --unknown-score top), and
// flycl predict answers "unknown" exactly where the root package's
// Rejection.Reject does, from the scores and cosines of the model file's
// predictor (--unknown auto), never with off, always with a threshold
// above every value; the probability is the softmax of the scores at the
// file's temperature; samples of classes the model never learned are
// counted as rejected, most of them. A bad --unknown is an error naming
// the flag.
func TestPredictUnknown(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		score reject.Score
	}{{nil, reject.ScoreTopCosine}, {[]string{"--unknown-score", "top"}, reject.ScoreTop}} {
		t.Run(string(tc.score), func(t *testing.T) { testPredictUnknown(t, tc.flags, tc.score) })
	}
}

func testPredictUnknown(t *testing.T, flags []string, kind reject.Score) {
	dir := t.TempDir()
	train, test, model := filepath.Join(dir, "train.npz"), filepath.Join(dir, "test.npz"), filepath.Join(dir, "m.flycl")
	blobs(t, train, 1, 16, 40, "cat", "dog")
	blobs(t, test, 2, 16, 20, "cat", "dog", "owl", "yak")
	args := append([]string{"learn", "--model", model, "--features", train, "--m", "300", "--p", "8", "--k", "90", "--lambdas", "1,10,100,1000", "--quiet"}, flags...)
	if out, err := runCLI(t, args...); err != nil || !strings.Contains(out, "unknown below "+string(kind)+" score") {
		t.Fatalf("learn: %v\n%s", err, out)
	}
	f, err := modelfile.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	pred := f.Snapshot.Predictor()
	rej := pred.Rejection()
	if rej.Score != kind {
		t.Fatalf("rejection %+v, want score %s", rej, kind)
	}
	ts, err := features.Load(test)
	if err != nil {
		t.Fatal(err)
	}
	sc, cos, err := pred.ScoresCosines(context.Background(), ts.X)
	if err != nil {
		t.Fatal(err)
	}
	nc := pred.Classes().Len()
	type result struct {
		Predictions []prediction
		Accuracy    *answer.Score
	}
	predict := func(unknown string) (result, error) {
		out, err := runCLI(t, "predict", "--model", model, "--features", test, "--format", "json", "--top", "2", "--unknown", unknown)
		var r result
		if err == nil {
			err = json.Unmarshal([]byte(out), &r)
		}
		return r, err
	}
	r, err := predict("auto")
	if err != nil {
		t.Fatal(err)
	}
	rejected, keptKnown := 0, 0
	for i, p := range r.Predictions {
		want := rej.Reject(sc[i*nc:(i+1)*nc], cos[i])
		if p.Unknown != want || (want && p.Answer != "unknown") || (!want && p.Answer != p.Top[0].Name) {
			t.Fatalf("sample %d: %+v, root package's decision %v (value %g, threshold %g)", i, p, want, rej.Value(sc[i*nc:(i+1)*nc], cos[i]), rej.Threshold)
		}
		s := 1 + math.Exp((float64(p.Top[1].Score)-float64(p.Top[0].Score))/rej.Temperature)
		if p.Probability == nil || math.Abs(*p.Probability-1/s) > 1e-12 {
			t.Fatalf("sample %d: probability %v, want %g", i, p.Probability, 1/s)
		}
		// how far below (negative) or above the threshold
		if v := rej.Value(sc[i*nc:(i+1)*nc], cos[i]); p.Margin == nil || *p.Margin != v-rej.Threshold || (*p.Margin < 0) != p.Unknown {
			t.Fatalf("sample %d: margin %v, want %g − %g", i, p.Margin, v, rej.Threshold)
		}
		if p.Unknown && (p.Truth == "owl" || p.Truth == "yak") {
			rejected++
		}
		if !p.Unknown && (p.Truth == "cat" || p.Truth == "dog") {
			keptKnown++
		}
	}
	if r.Accuracy == nil || r.Accuracy.Unknown != 40 || r.Accuracy.UnknownRejected != rejected || rejected < 30 || keptKnown < 30 {
		t.Fatalf("accuracy %+v, %d samples of unlearned classes rejected, %d of 40 learned kept", r.Accuracy, rejected, keptKnown)
	}
	// the table: an unknown answer says how typical it is of the samples
	// learned, how far below the threshold its raw score is, and
	// the best guess with its probability, not the guess's p alone
	table, err := runCLI(t, "predict", "--model", model, "--features", test, "--top", "2")
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range r.Predictions {
		if !p.Unknown {
			continue
		}
		want := fmt.Sprintf("score %.3g below the threshold); best guess %s (p=%.2f)", -*p.Margin, p.Top[0].Name, *p.Probability)
		if !strings.Contains(table, want) {
			t.Fatalf("sample %d: the table has no %q:\n%s", i, want, table)
		}
		break
	}
	for _, tc := range []struct {
		flag string
		all  bool
	}{{"off", false}, {"1e9", true}} {
		r, err := predict(tc.flag)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range r.Predictions {
			if p.Unknown != tc.all {
				t.Fatalf("--unknown %s: sample %d answered %s", tc.flag, i, p.Answer)
			}
		}
	}
	if _, err := predict("sometimes"); err == nil || !strings.Contains(err.Error(), "--unknown") {
		t.Errorf("--unknown sometimes: %v", err)
	}
}
