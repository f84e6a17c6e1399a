package modelfile

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/reject"
)

// calibratedFile returns the bytes of a small valid model file whose model
// calibrated its rejection when it learned.
func calibratedFile(t testing.TB) []byte {
	t.Helper()
	m, err := flycl.New(flycl.Config{M: 40, P: 3, K: 12, Seed: 5, Lambdas: []float64{1, 10}}, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetCalibration(&reject.Calibration{Keep: 0.9}); err != nil {
		t.Fatal(err)
	}
	x, y := task(2, []int{0, 1, 2}, 30)
	if _, err := m.Learn(context.Background(), x, y, nil); err != nil {
		t.Fatal(err)
	}
	if !m.Rejection().Enabled() {
		t.Fatal("a calibrated learn left rejection off")
	}
	var b bytes.Buffer
	if err := Encode(&b, &File{Snapshot: m.Snapshot()}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestRejectionRoundTrip: the rejection (score, threshold, share kept,
// temperature, samples) comes back from a file bit for bit; the same
// header read as an older format, and the version-1 file of testdata,
// load with rejection off; a rejection that means nothing is refused with
// an error naming it.
func TestRejectionRoundTrip(t *testing.T) {
	b := calibratedFile(t)
	f, err := Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	h, data := split(t, b)
	rj, ok := h["rejection"].(map[string]any)
	if !ok {
		t.Fatalf("header has no rejection: %v", h["rejection"])
	}
	got := f.Snapshot.Predictor().Rejection()
	if got.Score != reject.ScoreTopCosine || got.Keep != 0.9 || got.Threshold != rj["threshold"].(float64) || got.Temperature != rj["temperature"].(float64) || got.Samples != 30 ||
		got.TopMean != rj["top_mean"].(float64) || got.TopStd != rj["top_std"].(float64) || got.CosMean != rj["cos_mean"].(float64) || got.CosStd != rj["cos_std"].(float64) {
		t.Fatalf("decoded rejection %+v, header %v", got, rj)
	}
	if f.Snapshot.State().Rejection != got {
		t.Fatal("the snapshot's state and its predictor disagree")
	}
	hp, _ := h["calibration_pool"].([]any)
	pool := f.Snapshot.State().CalibrationPool
	if len(hp) != 60 || len(pool) != 60 {
		t.Fatalf("calibration pool: %d in the header, %d decoded, want 30 (top, cosine) pairs", len(hp), len(pool))
	}
	for i, v := range hp {
		if float32(v.(float64)) != pool[i] {
			t.Fatalf("pool value %d: header %v, decoded %v", i, v, pool[i])
		}
	}
	old, err := Decode(bytes.NewReader(forge(t, 2, h, data)))
	if err != nil {
		t.Fatal(err)
	}
	if r := old.Snapshot.Predictor().Rejection(); r != (reject.Rule{}) || old.Snapshot.State().CalibrationPool != nil {
		t.Fatalf("a version-2 file loaded with rejection %+v (pool %v), want off", r, old.Snapshot.State().CalibrationPool)
	}
	if v1, err := os.ReadFile("testdata/v1.flycl"); err == nil {
		f1, err := Decode(bytes.NewReader(v1))
		if err != nil {
			t.Fatal(err)
		}
		if r := f1.Snapshot.Predictor().Rejection(); r.Enabled() || r.Temperature != 0 {
			t.Fatalf("the version-1 file loaded with rejection %+v", r)
		}
	}
	// a file of a model calibrated on the top score (as every file was
	// before top+cosine) loads with its score: no standardization fields
	topHdr := map[string]any{}
	for k, v := range rj {
		if k != "top_mean" && k != "top_std" && k != "cos_mean" && k != "cos_std" {
			topHdr[k] = v
		}
	}
	topHdr["score"] = "top"
	h["rejection"], h["calibration_pool"] = topHdr, hp[:30]
	ft, err := Decode(bytes.NewReader(forge(t, Version, h, data)))
	if err != nil {
		t.Fatal(err)
	}
	if r := ft.Snapshot.Predictor().Rejection(); r.Score != reject.ScoreTop || r.Threshold != got.Threshold || r.TopStd != 0 || len(ft.Snapshot.State().CalibrationPool) != 30 {
		t.Fatalf("a file calibrated on the top score loaded with rejection %+v", r)
	}
	h["calibration_pool"] = hp
	for _, tc := range []struct {
		field string
		v     any
	}{{"score", "median"}, {"keep", 1.5}, {"temperature", -1.0}, {"samples", -3}, {"calibration_pool", make([]float64, reject.MaxCalibrationPool+1)},
		{"top_std", 0.0}, {"cos_std", -1.0}} {
		bad := map[string]any{}
		for k, v := range rj {
			bad[k] = v
		}
		h["rejection"] = bad
		if tc.field == "calibration_pool" {
			h["calibration_pool"] = tc.v
			h["rejection"] = rj
		} else {
			bad[tc.field] = tc.v
		}
		_, err := Decode(bytes.NewReader(forge(t, Version, h, data)))
		if err == nil || !strings.Contains(err.Error(), "rejection") && !strings.Contains(err.Error(), "calibration_pool") {
			t.Errorf("rejection with %s=%v: %v, want an error naming the rejection", tc.field, tc.v, err)
		}
	}
}
