package baselines

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/codec"
)

// TestHebbianReachesFlyCL runs the Hebbian learner and Fly-CL side by side
// over three tasks: same W, codes, statistics and GCV λ, so the Hebbian
// classifier must approach Fly-CL's Cholesky solution C* at the rate the
// rule guarantees. After each task its distance to C*, relative to ‖C*‖,
// must be below ρ^passes·‖C_start − C*‖/‖C*‖ plus float32 rounding, with
// ρ = 1 − (λmin + λ)/(λmax + λ) from a float64 eigendecomposition of G.
func TestHebbianReachesFlyCL(t *testing.T) {
	const d, passes = 12, 300
	cfg := flycl.Config{M: 60, P: 6, K: 20, Lambdas: []float64{30, 100, 300}}
	fly, err := flycl.New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	heb, err := NewHebbian(cfg, d, passes)
	if err != nil {
		t.Fatal(err)
	}
	var prev []float32
	for ti, cls := range [][]int{{4, 1}, {7}, {0, 2}} {
		x, y := blobs(uint64(ti)+9, 120, d, cls, 0.8)
		if _, err := fly.Learn(ctx, x, y, nil); err != nil {
			t.Fatal(err)
		}
		if err := heb.LearnTask(ctx, x, y); err != nil {
			t.Fatal(err)
		}
		if heb.LastLambda() != fly.Lambda() {
			t.Fatalf("task %d: λ %g, Fly-CL %g", ti, heb.LastLambda(), fly.Lambda())
		}
		cstar := codec.State(fly).Coef
		acc := heb.Statistics()
		m := acc.Dim()
		g := mat.NewSymDense(m, nil)
		for i := 0; i < m; i++ {
			for j := 0; j <= i; j++ {
				g.SetSym(i, j, float64(acc.G(i, j)))
			}
		}
		var es mat.EigenSym
		es.Factorize(g, false)
		ev := es.Values(nil)
		lam := fly.Lambda()
		lmin, lmax := math.Max(ev[0], 0), ev[len(ev)-1]
		rho := math.Max(math.Abs(1-heb.Step()*(lmin+lam)), math.Abs(1-heb.Step()*(lmax+lam)))
		if rho >= 1 {
			t.Fatalf("task %d: step %g does not contract (ρ=%g)", ti, heb.Step(), rho)
		}
		start := append(append([]float32(nil), prev...), make([]float32, len(cstar)-len(prev))...)
		norm := func(a, b []float32) float64 {
			var s float64
			for i := range a {
				e := float64(a[i])
				if b != nil {
					e -= float64(b[i])
				}
				s += e * e
			}
			return math.Sqrt(s)
		}
		cs := heb.coef
		rel := norm(cs, cstar) / norm(cstar, nil)
		noise := math.Sqrt(float64(m)) * 0x1p-24 * (lmax + lam) / (lmin + lam) / (1 - rho)
		bound := math.Pow(rho, passes)*norm(start, cstar)/norm(cstar, nil) + noise
		if rel > bound {
			t.Errorf("task %d: ‖C − C*‖/‖C*‖ = %.3g > %.3g (ρ=%.4f)", ti, rel, bound, rho)
		}
		xt, yt := blobs(uint64(ti)+50, 200, d, []int{4, 1, 7, 0, 2}[:len(heb.Labels())], 0.8)
		pf, _ := fly.Predictor().Predict(ctx, xt)
		ph, err := heb.Predict(ctx, xt)
		if err != nil {
			t.Fatal(err)
		}
		agree := 0
		for i := range pf {
			if pf[i] == ph[i] {
				agree++
			}
		}
		t.Logf("task %d: λ=%g ρ=%.4f rel=%.2e, predictions agree %d/%d", ti, lam, rho, rel, agree, len(yt))
		prev = append([]float32(nil), cs...)
	}
}
