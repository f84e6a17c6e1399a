package baselines

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/flycl/flycl/linalg"
	"github.com/flycl/flycl/ridge"
)

// RanPACGrid is RanPAC's ridge grid, 10^-8 .. 10^8.
var RanPACGrid = func() []float64 {
	g := make([]float64, 17)
	for i := range g {
		g[i] = math.Pow(10, float64(i-8))
	}
	return g
}()

// RanPAC is RanPAC without its first-session fine-tuning: a dense N(0,1)
// random projection d×M followed by ReLU, streaming G += HᵀH and Q += HᵀY
// (float32), and per task a ridge parameter chosen by fitting on the first
// 80% of the task's samples and measuring the mean squared error against
// one-hot targets on the last 20%; then (G + λI) Wo = Q is solved.
type RanPAC struct {
	d, m   int
	w      []float32 // d × M
	acc    *ridge.Accumulator
	cls    classMap
	coef   []float32 // C × M
	lambda float64
	Losses []float64 // validation MSE per grid value, last task
	hbuf   []float32
}

// NewRanPAC returns RanPAC with an M-dimensional projection drawn from seed.
func NewRanPAC(d, m int, seed uint64) (*RanPAC, error) {
	acc, err := ridge.NewAccumulator(m)
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(seed, 0x5a5a))
	w := make([]float32, d*m)
	for i := range w {
		w[i] = float32(r.NormFloat64())
	}
	return &RanPAC{d: d, m: m, w: w, acc: acc}, nil
}

// LastLambda returns the ridge parameter of the last task.
func (r *RanPAC) LastLambda() float64 { return r.lambda }

// expand returns ReLU(x W) (n × M) in buf when it is large enough.
func (r *RanPAC) expand(x []float32, n int, buf []float32) []float32 {
	if cap(buf) < n*r.m {
		buf = make([]float32, n*r.m)
	}
	h := buf[:n*r.m]
	linalg.Sgemm(false, false, n, r.m, r.d, 1, x, r.d, r.w, r.m, 0, h, r.m)
	for i, v := range h {
		if v < 0 {
			h[i] = 0
		}
	}
	return h
}

// LearnTask updates the statistics with the task and re-solves.
func (r *RanPAC) LearnTask(ctx context.Context, x []float32, labels []int) error {
	n, err := checkXY(x, labels, r.d)
	if err != nil {
		return fmt.Errorf("ranpac: %w", err)
	}
	idx := r.cls.add(labels)
	h := r.expand(x, n, r.hbuf)
	r.hbuf = h
	if err := r.acc.Add(h, n, idx); err != nil {
		return fmt.Errorf("ranpac: %w", err)
	}
	losses, err := SplitValidationMSE(h, n, r.m, idx, len(r.cls.labels), RanPACGrid)
	if err != nil {
		return fmt.Errorf("ranpac: %w", err)
	}
	best := 0
	for i, l := range losses {
		if l < losses[best] {
			best = i
		}
	}
	r.Losses, r.lambda = losses, RanPACGrid[best]
	if r.coef, err = r.acc.Solve(ctx, r.lambda); err != nil {
		return fmt.Errorf("ranpac: %w", err)
	}
	return nil
}

// Predict returns argmax of ReLU(xW) Wo.
func (r *RanPAC) Predict(_ context.Context, x []float32) ([]int, error) {
	if r.coef == nil {
		return nil, fmt.Errorf("ranpac: no class learned yet")
	}
	n, err := checkXY(x, nil, r.d)
	if err != nil {
		return nil, fmt.Errorf("ranpac: %w", err)
	}
	return predictLinear(func(lo, hi int, buf []float32) []float32 {
		return r.expand(x[lo*r.d:hi*r.d], hi-lo, buf)
	}, n, r.m, r.coef, r.cls.labels), nil
}

// predictLinear scores chunks of samples (codes from expand) against the
// class weights coef (C × m) and returns the best label of each.
func predictLinear(expand func(lo, hi int, buf []float32) []float32, n, m int, coef []float32, labels []int) []int {
	const chunk = 1024
	nc := len(labels)
	out := make([]int, n)
	var buf []float32
	s := make([]float32, chunk*nc)
	for lo := 0; lo < n; lo += chunk {
		hi := min(n, lo+chunk)
		h := expand(lo, hi, buf)
		buf = h
		linalg.Sgemm(false, true, hi-lo, nc, m, 1, h, m, coef, m, 0, s, nc)
		for i := 0; i < hi-lo; i++ {
			row := s[i*nc : (i+1)*nc]
			b := 0
			for c, v := range row {
				if v > row[b] {
					b = c
				}
			}
			out[lo+i] = labels[b]
		}
	}
	return out
}

// SplitValidationMSE returns, for each λ in grid, the mean squared error
// on the last 20% of the task's samples of the ridge regression fitted on
// the first 80% (one-hot targets over nc classes, no bias), as RanPAC's
// optimise_ridge_parameter computes it. It is exact: with fewer training
// samples than dimensions it works in the dual, Ŷ_val = H_val H_trᵀ
// (K + λI)⁻¹ Y_tr with K = H_tr H_trᵀ eigendecomposed once in float64;
// otherwise it factors H_trᵀH_tr + λI for each λ in float64.
func SplitValidationMSE(h []float32, n, m int, labels []int, nc int, grid []float64) ([]float64, error) {
	ntr := int(float64(n) * 0.8)
	nv := n - ntr
	if ntr == 0 || nv == 0 {
		return nil, fmt.Errorf("task of %d samples is too small for an 80/20 split", n)
	}
	h64 := make([]float64, n*m)
	for i, v := range h {
		h64[i] = float64(v)
	}
	htr, hv := h64[:ntr*m], h64[ntr*m:]
	ytr := make([]float64, ntr*nc)
	for i := 0; i < ntr; i++ {
		ytr[i*nc+labels[i]] = 1
	}
	losses := make([]float64, len(grid))
	mse := func(pred []float64) float64 {
		var s float64
		for i := 0; i < nv; i++ {
			for c := 0; c < nc; c++ {
				t := 0.0
				if labels[ntr+i] == c {
					t = 1
				}
				d := pred[i*nc+c] - t
				s += d * d
			}
		}
		return s / float64(nv*nc)
	}
	if ntr < m {
		k := make([]float64, ntr*ntr)
		linalg.Dsyrk(false, ntr, m, 1, htr, m, 0, k, ntr)
		s := make([]float64, ntr)
		if err := linalg.Dsyevd(true, ntr, k, ntr, s); err != nil {
			return nil, err
		}
		// rows of k are eigenvectors u_j. A = H_v H_trᵀ Uᵀ-rows: A[i][j] = (H_v H_trᵀ u_j)_i
		hvtr := make([]float64, nv*ntr)
		linalg.Dgemm(false, true, nv, ntr, m, 1, hv, m, htr, m, 0, hvtr, ntr)
		a := make([]float64, nv*ntr)
		linalg.Dgemm(false, true, nv, ntr, ntr, 1, hvtr, ntr, k, ntr, 0, a, ntr)
		b := make([]float64, ntr*nc) // Uᵀ Y_tr: row j = u_jᵀ Y
		linalg.Dgemm(false, false, ntr, nc, ntr, 1, k, ntr, ytr, nc, 0, b, nc)
		bs := make([]float64, ntr*nc)
		pred := make([]float64, nv*nc)
		for gi, lambda := range grid {
			for j := 0; j < ntr; j++ {
				f := 1 / (math.Max(s[j], 0) + lambda)
				for c := 0; c < nc; c++ {
					bs[j*nc+c] = b[j*nc+c] * f
				}
			}
			linalg.Dgemm(false, false, nv, nc, ntr, 1, a, ntr, bs, nc, 0, pred, nc)
			losses[gi] = mse(pred)
		}
		return losses, nil
	}
	g := make([]float64, m*m)
	linalg.Dsyrk(true, m, ntr, 1, htr, m, 0, g, m)
	q := make([]float64, nc*m) // (H_trᵀ Y_tr)ᵀ
	linalg.Dgemm(true, false, nc, m, ntr, 1, ytr, nc, htr, m, 0, q, m)
	f := make([]float64, m*m)
	wo := make([]float64, nc*m)
	pred := make([]float64, nv*nc)
	for gi, lambda := range grid {
		copy(f, g)
		for i := 0; i < m; i++ {
			f[i*m+i] += lambda
		}
		if err := linalg.Dpotrf(m, f, m); err != nil {
			return nil, fmt.Errorf("lambda %g: %w", lambda, err)
		}
		copy(wo, q)
		linalg.Dpotrs(m, nc, f, m, wo, m)
		linalg.Dgemm(false, true, nv, nc, m, 1, hv, m, wo, m, 0, pred, nc)
		losses[gi] = mse(pred)
	}
	return losses, nil
}
