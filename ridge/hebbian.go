package ridge

import (
	"context"
	"fmt"
	"math"

	"github.com/flycl/flycl/linalg"
)

// Hebbian runs passes of the three-factor Hebbian rule of the Fly-CL paper
// ("Consistency between ridge classification and Hebbian learning rules"),
//
//	ΔC = η (h yᵀ − h ŷᵀ − λ C),   ŷ = Cᵀ h,
//
// summed over every sample the statistics hold. Summed, the pre-synaptic ×
// target term is S = Σ h yᵀ and the pre-synaptic × output term is G C with
// G = Σ h hᵀ, so one pass is one step of gradient descent on the ridge
// objective ½‖Y − HC‖² + ½λ‖C‖²:
//
//	C ← C + η (S − (G + λI) C),
//
// whose fixed point is the ridge solution C* = (G + λI)⁻¹ S. c holds C as
// classes × m rows (the layout of Solve) and is updated in place; its rows
// must number Classes(). With eta <= 0 the step is η = 1/(μ + λ), μ the
// largest eigenvalue of G estimated by power iteration (EstimateMaxEigen):
// for any η < 2/λmax(G + λI) the error contracts every pass by at least
// max|1 − η(σ + λ)| over the eigenvalues σ of G, which for η = 1/(λmax + λ)
// is 1 − (λmin + λ)/(λmax + λ). progress, if not nil, is called after every
// pass with the pass number (from 1). Hebbian returns the η it used.
//
// It uses the factor workspace (like Factor): call Factor again before
// SolveRows.
func (a *Accumulator) Hebbian(ctx context.Context, c []float32, lambda, eta float64, passes int, progress func(pass int)) (float64, error) {
	m, nc := a.m, a.nc
	switch {
	case len(c) != nc*m:
		return 0, fmt.Errorf("ridge: Hebbian: C has %d values, want %d×%d", len(c), nc, m)
	case !(lambda > 0) || math.IsInf(lambda, 0):
		return 0, fmt.Errorf("ridge: Hebbian: lambda must be positive and finite, got %g", lambda)
	case passes < 0:
		return 0, fmt.Errorf("ridge: Hebbian: passes must be >= 0, got %d", passes)
	case math.IsNaN(eta) || math.IsInf(eta, 0):
		return 0, fmt.Errorf("ridge: Hebbian: step %g is not finite", eta)
	}
	if eta <= 0 {
		mu, err := a.EstimateMaxEigen(ctx, 100)
		if err != nil {
			return 0, err
		}
		eta = 1 / (mu + lambda)
	}
	a.fullG()
	r := make([]float32, nc*m)
	for p := 1; p <= passes; p++ {
		if err := ctx.Err(); err != nil {
			return eta, err
		}
		// r = S − C G − λC, computed as r = S; r −= C·G; then the rest.
		copy(r, a.s)
		linalg.Sgemm(false, false, nc, m, m, -1, c, m, a.buf, m, 1, r, m)
		for i, v := range c {
			c[i] = float32(float64(v) + eta*(float64(r[i])-lambda*float64(v)))
		}
		if progress != nil {
			progress(p)
		}
	}
	return eta, nil
}

// fullG writes G into the whole workspace (lower triangle mirrored to the
// upper one, diagonal restored), overwriting any factor.
func (a *Accumulator) fullG() {
	a.fac = 0
	mirrorLower(a.buf, a.m)
	for i := 0; i < a.m; i++ {
		a.buf[i*a.m+i] = a.diag[i]
	}
}

// EstimateMaxEigen estimates the largest eigenvalue of G by iters steps of
// power iteration from the all-ones vector (a Rayleigh quotient, so never
// above the true value). It uses the factor workspace like Factor.
func (a *Accumulator) EstimateMaxEigen(ctx context.Context, iters int) (float64, error) {
	m := a.m
	a.fullG()
	v := make([]float32, m)
	w := make([]float32, m)
	for i := range v {
		v[i] = float32(1 / math.Sqrt(float64(m)))
	}
	var rq float64
	for it := 0; it < iters; it++ {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		linalg.Sgemm(false, false, 1, m, m, 1, v, m, a.buf, m, 0, w, m)
		var vw, ww float64
		for i := range w {
			vw += float64(v[i]) * float64(w[i])
			ww += float64(w[i]) * float64(w[i])
		}
		rq = vw
		if ww == 0 {
			return 0, nil
		}
		s := 1 / math.Sqrt(ww)
		for i := range w {
			v[i] = float32(float64(w[i]) * s)
		}
	}
	return rq, nil
}
