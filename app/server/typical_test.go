package server

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/codec"
)

// TestTypicalityOverHTTP: GET /v1/model states the threshold in words
// with its share, and every predict answer carries the share of the
// learned samples more typical than it, counted here by brute force over
// the model's leave-one-out pool; a sample is unknown exactly when its
// share reaches the model's.
func TestTypicalityOverHTTP(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.flycl")
	cfg := testConfig()
	b, err := OpenFileWith(context.Background(), path, FileOptions{Create: func() (*flycl.Model, error) { return flycl.New(cfg, testDim) }})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := newLoopbackServer(t, s)
	r := rand.New(rand.NewPCG(7, 8))
	x, y := clusters(r, []int{0, 1, 2}, 12)
	learnFeatures(t, hs, "", x, y)

	var info ModelResponse
	if code, _, body := do(t, "GET", hs+"/v1/model", "", nil, "", &info); code != 200 || info.Unknown == nil {
		t.Fatalf("GET /v1/model: %d %s", code, body)
	}
	u := info.Unknown
	if !u.Enabled || !(u.UnknownShare > 0 && u.UnknownShare <= 1) || !strings.Contains(u.InWords, "less typical than") {
		t.Fatalf("unknown in words: %+v", u)
	}
	m := b.model().Model
	rule, pool := m.Rejection(), codec.CalibrationPool(m)
	var vals []float64
	for i := 0; i+1 < len(pool); i += 2 {
		vals = append(vals, (float64(pool[i])-rule.TopMean)/rule.TopStd+(float64(pool[i+1])-rule.CosMean)/rule.CosStd)
	}
	if len(vals) == 0 || rule.Score != "top+cosine" {
		t.Fatalf("pool %d values under %q", len(vals), rule.Score)
	}
	atLeast := 0
	for _, v := range vals {
		if v >= rule.Threshold {
			atLeast++
		}
	}
	if want := float64(atLeast) / float64(len(vals)); u.UnknownShare != want {
		t.Errorf("unknown_share %g, counted %g", u.UnknownShare, want)
	}

	tx, _ := clusters(r, []int{0, 1, 5, 6}, 8) // two classes it never learned
	var pr PredictResponse
	if code, _, body := do(t, "POST", hs+"/v1/predict", "application/json", jsonBody(t, Request{Features: tx, Top: 1}), "", &pr); code != 200 {
		t.Fatalf("predict: %d %s", code, body)
	}
	for i, p := range pr.Predictions {
		if p.MoreTypical == nil || p.Margin == nil {
			t.Fatalf("answer %d: no share: %+v", i, p)
		}
		above := 0
		for _, v := range vals {
			if v > *p.Margin+rule.Threshold {
				above++
			}
		}
		if want := float64(above) / float64(len(vals)); *p.MoreTypical != want {
			t.Errorf("answer %d: share %g, counted %g", i, *p.MoreTypical, want)
		}
		if p.Unknown != (*p.MoreTypical >= u.UnknownShare) {
			t.Errorf("answer %d: unknown %v with share %g against %g", i, p.Unknown, *p.MoreTypical, u.UnknownShare)
		}
	}
}
