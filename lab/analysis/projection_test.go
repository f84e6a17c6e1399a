package analysis

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/flycl/flycl/projection"
)

// TestProjectionDistortionChiSquare checks the ratios before top-k against
// their exact law. For a fixed z, each row of W contributes (w·z)² with
// mean (p/d)‖z‖² (p of the d columns carry a N(0,1) entry), so with the
// scale s = √(m p/d) the squared ratio has mean exactly 1; for the dense
// Gaussian W it is χ²_m/m, with standard deviation √(2/m). The sample mean
// over pairs that share W is within a few √(2/m) of 1 however the pairs
// correlate, so the test allows 4√(2/m); the dense ratio's standard
// deviation must be √(2/m)/2 (delta method) within 25%.
func TestProjectionDistortionChiSquare(t *testing.T) {
	const n, d, m, p, k, pairs = 300, 64, 3000, 16, 900, 400
	r := rand.New(rand.NewPCG(5, 5))
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	got, err := ProjectionDistortion(context.Background(), x, d, m, p, k, projection.Signed, pairs, 11)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("%d summaries, want 4", len(got))
	}
	sd := math.Sqrt(2.0 / m)
	for _, s := range []Distortion{got[0], got[2]} {
		if ms := s.RMS * s.RMS; math.Abs(ms-1) > 4*sd {
			t.Errorf("%s: mean squared ratio %.4f, want 1 ± %.4f", s.Name, ms, 4*sd)
		}
	}
	if want := sd / 2; math.Abs(got[2].Std-want) > 0.25*want {
		t.Errorf("dense: std of ratio %.4g, want %.4g ± 25%%", got[2].Std, want)
	}
	// top-k keeps k of m coordinates: the codes are shorter and the ratio
	// falls below 1, but never above what the full projection gives.
	for _, i := range []int{1, 3} {
		if got[i].RMS >= got[i-1].RMS {
			t.Errorf("%s: RMS %.3f not below the untruncated %.3f", got[i].Name, got[i].RMS, got[i-1].RMS)
		}
	}
	for _, bad := range []struct {
		name                 string
		d, m, k, pairs, rows int
	}{{"d", 0, m, k, 1, n}, {"k", d, m, m + 1, 1, n}, {"pairs", d, m, k, 0, n}, {"rows", d, m, k, 1, 1}} {
		if _, err := ProjectionDistortion(context.Background(), x[:bad.rows*d], bad.d, bad.m, p, bad.k, projection.Signed, bad.pairs, 1); err == nil {
			t.Errorf("%s: no error", bad.name)
		}
	}
}
