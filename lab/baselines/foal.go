package baselines

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/flycl/flycl/linalg"
)

// FOAL is F-OAL's analytic classifier: a fixed random linear map d → E
// with bias (PyTorch nn.Linear initialisation, uniform ±1/√d) and a
// sigmoid, then recursive least squares in float64 from R = I/γ, W = 0,
// one mini-batch X at a time:
//
//	R ← R − R Xᵀ (I + X R Xᵀ)⁻¹ X R
//	W ← W + R Xᵀ (Y − X W)
//
// which leaves W = (Σ XᵀX + γI)⁻¹ Σ XᵀY after any sequence of batches.
// F-OAL's own feature is the mean CLS token over all ViT blocks after the
// final LayerNorm; on backbones without intermediate tokens the final
// feature is used (the caller decides what x is).
type FOAL struct {
	d, e  int
	Batch int // mini-batch size (10 in F-OAL)
	gamma float64
	mapW  []float32 // d × E
	mapB  []float32
	r     []float64 // E × E
	w     []float64 // E × C (row-major, C grows)
	nc    int
	cls   classMap
}

// NewFOAL returns F-OAL with an E-dimensional random map drawn from seed
// and regularisation gamma.
func NewFOAL(d, e int, gamma float64, seed uint64) (*FOAL, error) {
	if d <= 0 || e <= 0 || !(gamma > 0) {
		return nil, fmt.Errorf("foal: need d, E > 0 and gamma > 0 (d=%d E=%d gamma=%g)", d, e, gamma)
	}
	rng := rand.New(rand.NewPCG(seed, 0xf0a1))
	bound := 1 / math.Sqrt(float64(d))
	f := &FOAL{d: d, e: e, Batch: 10, gamma: gamma, mapW: make([]float32, d*e), mapB: make([]float32, e), r: make([]float64, e*e)}
	for i := range f.mapW {
		f.mapW[i] = float32((2*rng.Float64() - 1) * bound)
	}
	for i := range f.mapB {
		f.mapB[i] = float32((2*rng.Float64() - 1) * bound)
	}
	for i := 0; i < e; i++ {
		f.r[i*e+i] = 1 / gamma
	}
	return f, nil
}

// Embed maps n×d features to the n×E sigmoid codes.
func (f *FOAL) Embed(x []float32, n int) []float64 {
	z := make([]float32, n*f.e)
	for i := 0; i < n; i++ {
		copy(z[i*f.e:(i+1)*f.e], f.mapB)
	}
	linalg.Sgemm(false, false, n, f.e, f.d, 1, x, f.d, f.mapW, f.e, 1, z, f.e)
	out := make([]float64, len(z))
	for i, v := range z {
		out[i] = 1 / (1 + math.Exp(-float64(v)))
	}
	return out
}

// grow adds zero columns to W for new classes.
func (f *FOAL) grow(nc int) {
	if nc <= f.nc {
		return
	}
	w := make([]float64, f.e*nc)
	for i := 0; i < f.e; i++ {
		copy(w[i*nc:i*nc+f.nc], f.w[i*f.nc:(i+1)*f.nc])
	}
	f.w, f.nc = w, nc
}

// LearnTask feeds the task in mini-batches of f.Batch, in order.
func (f *FOAL) LearnTask(_ context.Context, x []float32, labels []int) error {
	n, err := checkXY(x, labels, f.d)
	if err != nil {
		return fmt.Errorf("foal: %w", err)
	}
	idx := f.cls.add(labels)
	f.grow(len(f.cls.labels))
	for lo := 0; lo < n; lo += f.Batch {
		hi := min(n, lo+f.Batch)
		if err := f.update(f.Embed(x[lo*f.d:hi*f.d], hi-lo), idx[lo:hi]); err != nil {
			return fmt.Errorf("foal: %w", err)
		}
	}
	return nil
}

// update applies one recursive least-squares step for the b×E batch xb.
func (f *FOAL) update(xb []float64, idx []int) error {
	b, e, nc := len(idx), f.e, f.nc
	rx := make([]float64, e*b) // R Xᵀ (E×b)
	linalg.Dgemm(false, true, e, b, e, 1, f.r, e, xb, e, 0, rx, b)
	k := make([]float64, b*b) // I + X R Xᵀ
	linalg.Dgemm(false, false, b, b, e, 1, xb, e, rx, b, 0, k, b)
	for i := 0; i < b; i++ {
		k[i*b+i]++
	}
	if err := linalg.Dpotrf(b, k, b); err != nil {
		return err
	}
	// zt row i = K⁻¹ (row i of R Xᵀ); K is symmetric, so
	// (R Xᵀ) K⁻¹ (X R) = rx · ztᵀ, using X R = (R Xᵀ)ᵀ for symmetric R.
	zt := make([]float64, e*b)
	copy(zt, rx)
	linalg.Dpotrs(b, e, k, b, zt, b)
	linalg.Dgemm(false, true, e, e, b, -1, rx, b, zt, b, 1, f.r, e)
	// W ← W + R_new Xᵀ (Y − X W)
	res := make([]float64, b*nc)
	linalg.Dgemm(false, false, b, nc, e, -1, xb, e, f.w, nc, 0, res, nc)
	for i, c := range idx {
		res[i*nc+c]++
	}
	rxNew := make([]float64, e*b)
	linalg.Dgemm(false, true, e, b, e, 1, f.r, e, xb, e, 0, rxNew, b)
	linalg.Dgemm(false, false, e, nc, b, 1, rxNew, b, res, nc, 1, f.w, nc)
	return nil
}

// Weights returns W (E × C, row-major) and C.
func (f *FOAL) Weights() ([]float64, int) { return f.w, f.nc }

// Predict returns argmax of sigmoid(x A + b) W.
func (f *FOAL) Predict(_ context.Context, x []float32) ([]int, error) {
	if f.nc == 0 {
		return nil, fmt.Errorf("foal: no class learned yet")
	}
	n, err := checkXY(x, nil, f.d)
	if err != nil {
		return nil, fmt.Errorf("foal: %w", err)
	}
	z := f.Embed(x, n)
	s := make([]float64, n*f.nc)
	linalg.Dgemm(false, false, n, f.nc, f.e, 1, z, f.e, f.w, f.nc, 0, s, f.nc)
	out := make([]int, n)
	for i := 0; i < n; i++ {
		row := s[i*f.nc : (i+1)*f.nc]
		b := 0
		for c, v := range row {
			if v > row[b] {
				b = c
			}
		}
		out[i] = f.cls.labels[b]
	}
	return out, nil
}
