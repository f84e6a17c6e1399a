package flycl

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

func TestLambdaCheck(t *testing.T) {
	grid := []float64{1e6, 1e7, 1e8, 1e9}
	for _, c := range []struct {
		name   string
		grid   []float64
		scores []float64
		chosen float64
		want   LambdaIssue
	}{
		{"interior", grid, []float64{0.9, 0.5, 0.7, 0.95}, 1e7, ""},
		{"low edge", grid, []float64{0.4, 0.5, 0.7, 0.95}, 1e6, LambdaLowEdge},
		{"high edge", grid, []float64{0.9, 0.8, 0.7, 0.6}, 1e9, LambdaHighEdge},
		{"unsorted grid, high edge", []float64{1e8, 1e6, 1e9, 1e7}, []float64{0.5, 0.9, 0.4, 0.8}, 1e9, LambdaHighEdge},
		{"flat", grid, []float64{1, 1 + 5e-8, 1 - 9e-8, 1}, 1e8, LambdaFlat},
		{"NaN", grid, []float64{math.NaN(), 1, 1, 1}, 1e7, LambdaNotFinite},
		// +Inf is what GCV gives a λ that cannot be factored: no issue by
		// itself, and left out of the flat check.
		{"interior, smallest λ not factorable", grid, []float64{math.Inf(1), 0.5, 0.7, 0.9}, 1e7, ""},
		{"high edge, all smaller λ not factorable", grid, []float64{math.Inf(1), math.Inf(1), math.Inf(1), 0.6}, 1e9, LambdaHighEdge},
		{"flat among the factorable", grid, []float64{math.Inf(1), 1, 1 + 5e-8, 1}, 1e7, LambdaFlat},
		{"all +Inf", grid, []float64{math.Inf(1), math.Inf(1), math.Inf(1), math.Inf(1)}, 1e6, LambdaNotFinite},
		{"-Inf", grid, []float64{1, math.Inf(-1), 1, 2}, 1e7, LambdaNotFinite},
		{"one value", []float64{1e6}, []float64{0.5}, 1e6, ""},
		{"fixed lambda", nil, nil, 1e6, ""},
	} {
		if got := LambdaCheck(c.grid, c.scores, c.chosen); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	// The λ GCV chose counts, not the one the factorisation raised it to.
	r := TaskRecord{Grid: grid, GCV: []float64{0.9, 0.8, 0.7, 0.6}, Lambda: 1e11, RaisedFrom: 1e9}
	if r.LambdaIssue() != LambdaHighEdge {
		t.Errorf("raised: %q", r.LambdaIssue())
	}
}

// scaledBlobs are c well-separated Gaussian classes in d dimensions,
// multiplied by scale.
func scaledBlobs(seed uint64, c, per, d int, scale float64) ([]float32, []int) {
	r := rand.New(rand.NewPCG(seed, 9))
	var x []float32
	var y []int
	for k := 0; k < c; k++ {
		mr := rand.New(rand.NewPCG(uint64(k), 77))
		mean := make([]float64, d)
		for j := range mean {
			mean[j] = 3 * mr.NormFloat64()
		}
		for i := 0; i < per; i++ {
			for j := 0; j < d; j++ {
				x = append(x, float32(scale*(mean[j]+r.NormFloat64())))
			}
			y = append(y, k)
		}
	}
	return x, y
}

// The default grid on features of an extreme scale: GCV overflows (1e20:
// G = HᵀH exceeds float32), is flat (1e-30: G underflows to 0, every λ
// dominates; 1e6: every λ is negligible against G) or wants a λ above the grid (1e3). Each choice is flagged.
func TestLambdaIssueOnScaledFeatures(t *testing.T) {
	for _, c := range []struct {
		scale float64
		want  LambdaIssue
	}{{1e20, LambdaNotFinite}, {1e-30, LambdaFlat}, {1e6, LambdaFlat}, {1e3, LambdaHighEdge}} {
		x, y := scaledBlobs(1, 4, 50, 32, c.scale)
		m, err := New(Config{M: 2000, P: 10, K: 200}, 32)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := m.Learn(context.Background(), x, y, nil)
		if err != nil && c.want == LambdaNotFinite {
			// The pure-Go backend refuses the overflowed system outright
			// ("no lambda ... gives a numerically positive definite
			// system"): an error is as good as a flag.
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := rec.LambdaIssue(); got != c.want {
			t.Errorf("scale %g: issue %q (GCV %v, λ %g), want %q", c.scale, got, rec.GCV, rec.Lambda, c.want)
		}
		if len(rec.Grid) != 4 || rec.Grid[0] != 1e6 {
			t.Errorf("scale %g: grid %v", c.scale, rec.Grid)
		}
	}
}
