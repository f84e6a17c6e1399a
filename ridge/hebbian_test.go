package ridge

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestHebbianConvergesToRidge checks the Hebbian rule against the closed
// form: after t passes with η = 1/(λmax + λ) the distance to the float64
// ridge solution C* = (G + λI)⁻¹ S must obey the contraction bound
// ‖C_t − C*‖ ≤ ρᵗ ‖C_0 − C*‖, ρ = 1 − (λmin + λ)/(λmax + λ), with λmin and
// λmax the extreme eigenvalues of G computed in float64. The slack added to
// the bound is float32 rounding of each pass (G, C and the update are
// float32): about √m·u·‖C*‖·κ per pass, summed geometrically.
func TestHebbianConvergesToRidge(t *testing.T) {
	for _, tc := range []struct {
		n, m, nc int
		lambda   float64
		passes   int
	}{
		{60, 30, 3, 500, 50},
		{40, 80, 4, 2000, 200}, // n < m: λmin(G) = 0
		{200, 50, 5, 50, 400},  // badly conditioned: slow contraction
	} {
		h, labels := classData(uint64(tc.n+tc.m), tc.n, tc.m, tc.nc)
		acc, err := NewAccumulator(tc.m)
		if err != nil {
			t.Fatal(err)
		}
		if err := acc.Add(h, tc.n, labels); err != nil {
			t.Fatal(err)
		}
		// float64 truth
		hd := dense64(h, tc.n, tc.m)
		var g mat.SymDense
		g.SymOuterK(1, hd.T())
		var es mat.EigenSym
		if !es.Factorize(&g, false) {
			t.Fatal("eigen failed")
		}
		ev := es.Values(nil)
		lmin, lmax := math.Max(ev[0], 0), ev[len(ev)-1]
		a := mat.NewDense(tc.m, tc.m, nil)
		a.Copy(&g)
		for i := 0; i < tc.m; i++ {
			a.Set(i, i, a.At(i, i)+tc.lambda)
		}
		y := mat.NewDense(tc.n, tc.nc, nil)
		for i, l := range labels {
			y.Set(i, l, 1)
		}
		var s, cstar mat.Dense
		s.Mul(hd.T(), y)
		if err := cstar.Solve(a, &s); err != nil {
			t.Fatal(err)
		}
		dist := func(c []float32) float64 {
			var d float64
			for cls := 0; cls < tc.nc; cls++ {
				for j := 0; j < tc.m; j++ {
					e := float64(c[cls*tc.m+j]) - cstar.At(j, cls)
					d += e * e
				}
			}
			return math.Sqrt(d)
		}
		c := make([]float32, tc.nc*tc.m)
		d0 := dist(c)
		var dists []float64
		eta, err := acc.Hebbian(context.Background(), c, tc.lambda, 0, tc.passes, func(int) { dists = append(dists, dist(c)) })
		if err != nil {
			t.Fatal(err)
		}
		if eta <= 0 || eta >= 2/(lmax+tc.lambda) {
			t.Fatalf("%+v: step %g outside (0, 2/λmax(G+λI)) = (0, %g)", tc, eta, 2/(lmax+tc.lambda))
		}
		rho := math.Max(math.Abs(1-eta*(lmin+tc.lambda)), math.Abs(1-eta*(lmax+tc.lambda)))
		kappa := (lmax + tc.lambda) / (lmin + tc.lambda)
		noise := math.Sqrt(float64(tc.m)) * 0x1p-24 * kappa * mat.Norm(&cstar, 2) / (1 - rho)
		for p, d := range dists {
			bound := math.Pow(rho, float64(p+1))*d0 + noise
			if d > bound {
				t.Fatalf("%+v: pass %d: ‖C−C*‖ = %.3g > bound %.3g (ρ=%.4f)", tc, p+1, d, bound, rho)
			}
		}
		t.Logf("%+v: ρ=%.4f, ‖C−C*‖/‖C*‖ %.2e after %d passes", tc, rho, dists[len(dists)-1]/mat.Norm(&cstar, 2), tc.passes)
	}
}

func TestHebbianErrors(t *testing.T) {
	acc, _ := NewAccumulator(4)
	h, labels := classData(3, 5, 4, 2)
	if err := acc.Add(h, 5, labels); err != nil {
		t.Fatal(err)
	}
	c := make([]float32, 8)
	ctx := context.Background()
	for name, f := range map[string]func() error{
		"short C": func() error { _, err := acc.Hebbian(ctx, c[1:], 1, 0, 1, nil); return err },
		"lambda":  func() error { _, err := acc.Hebbian(ctx, c, 0, 0, 1, nil); return err },
		"passes":  func() error { _, err := acc.Hebbian(ctx, c, 1, 0, -1, nil); return err },
		"eta NaN": func() error { _, err := acc.Hebbian(ctx, c, 1, math.NaN(), 1, nil); return err },
	} {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
