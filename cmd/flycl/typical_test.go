package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/store"
)

// TestPredictTypicality: predict's answers carry the share of the learned
// samples more typical than each input, counted here by brute force over
// the model file's leave-one-out pool (ScoreTopCosine's pairs
// standardized by the rule's own means and deviations); an input is
// "unknown" exactly when that share reaches the one flycl info states in
// words; the table says it in words and keeps the raw margin.
func TestPredictTypicality(t *testing.T) {
	dir := t.TempDir()
	train, test, model := filepath.Join(dir, "train.npz"), filepath.Join(dir, "test.npz"), filepath.Join(dir, "m.flycl")
	blobs(t, train, 1, 6, 20, "cat", "dog", "fox")
	blobs(t, test, 2, 6, 10, "cat", "dog", "owl")
	if out, err := runCLI(t, "learn", "--model", model, "--features", train, "--m", "300", "--k", "90", "--p", "6", "--quiet"); err != nil {
		t.Fatalf("learn: %v\n%s", err, out)
	}
	f, err := store.LoadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	st := f.Snapshot.State()
	rule, pool := st.Rejection, st.CalibrationPool
	if !rule.Enabled() || len(pool) == 0 {
		t.Fatalf("no calibrated rejection: %+v, pool %d", rule, len(pool))
	}
	var vals []float64
	for i := 0; i+1 < len(pool); i += 2 {
		vals = append(vals, (float64(pool[i])-rule.TopMean)/rule.TopStd+(float64(pool[i+1])-rule.CosMean)/rule.CosStd)
	}
	share := func(v float64, strict bool) float64 {
		n := 0
		for _, w := range vals {
			if w > v || !strict && w == v {
				n++
			}
		}
		return float64(n) / float64(len(vals))
	}
	out, err := runCLI(t, "predict", "--model", model, "--features", test, "--format", "json", "--quiet")
	if err != nil {
		t.Fatalf("predict: %v\n%s", err, out)
	}
	var res struct {
		Predictions []prediction `json:"predictions"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	at := share(rule.Threshold, false)
	unknowns := 0
	for i, p := range res.Predictions {
		if p.MoreTypical == nil || p.Margin == nil {
			t.Fatalf("answer %d has no typicality: %+v", i, p)
		}
		want := share(*p.Margin+rule.Threshold, true)
		if d := *p.MoreTypical - want; d > 1e-12 || d < -1e-12 {
			t.Errorf("answer %d: more typical share %g, counted %g", i, *p.MoreTypical, want)
		}
		if p.Unknown != (*p.MoreTypical >= at) {
			t.Errorf("answer %d: unknown %v, share %g against the rule's %g", i, p.Unknown, *p.MoreTypical, at)
		}
		if p.Unknown {
			unknowns++
		}
	}
	if unknowns == 0 || unknowns == len(res.Predictions) {
		t.Errorf("%d of %d unknown: the test's owls should be, the cats and dogs not all", unknowns, len(res.Predictions))
	}
	table, err := runCLI(t, "predict", "--model", model, "--features", test, "--quiet")
	if err != nil || !strings.Contains(table, "less typical than") || !strings.Contains(table, "below the threshold") {
		t.Errorf("the table says no typicality: %v\n%s", err, table)
	}
	info, err := runCLI(t, "info", model)
	if err != nil || !strings.Contains(info, "a photo is unknown when it is less typical than") {
		t.Errorf("info: %v\n%s", err, info)
	}
}
