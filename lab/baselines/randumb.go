package baselines

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/flycl/flycl/linalg"
	"github.com/flycl/flycl/ridge"
)

// RanDumb embeds features with random Fourier features of an RBF kernel
// (scikit-learn's RBFSampler: W ~ N(0, 2γ), b ~ U(0, 2π),
// z = √(2/D) cos(xW + b), γ = 1/(d·Var x) from the first task) and
// classifies by Mahalanobis distance to the class means under a shared
// covariance shrunk by the Oracle Approximating Shrinkage (OAS) estimator.
//
// Its streaming form is exact: with N samples, per-class sums s_c and
// counts n_c, and Σ zzᵀ, the pooled within-class covariance is
// (Σ zzᵀ − Σ_c s_c s_cᵀ/n_c)/N, which is what a batch estimate over all
// samples so far gives.
type RanDumb struct {
	d, D   int
	seed   uint64
	gamma  float64
	w      []float32 // d × D
	b      []float32
	zz     []float32 // D × D, lower triangle = Σ zzᵀ; upper = workspace
	zzDiag []float32
	sums   [][]float64
	counts []int
	n      int
	cls    classMap
	// after each task: Σ⁻¹μ_c (C × D) and the constants −½ μ_cᵀΣ⁻¹μ_c
	proj      []float32
	bias      []float64
	Shrinkage float64 // OAS shrinkage of the last solve
}

// NewRanDumb returns RanDumb with a D-dimensional embedding drawn from seed.
func NewRanDumb(d, dim int, seed uint64) (*RanDumb, error) {
	if d <= 0 || dim <= 0 {
		return nil, fmt.Errorf("randumb: need d, D > 0")
	}
	return &RanDumb{d: d, D: dim, seed: seed, zz: make([]float32, dim*dim), zzDiag: make([]float32, dim)}, nil
}

func (r *RanDumb) init(x []float32) {
	var s, q float64
	for _, v := range x {
		s += float64(v)
		q += float64(v) * float64(v)
	}
	nv := float64(len(x))
	variance := q/nv - (s/nv)*(s/nv)
	if variance <= 0 {
		variance = 1
	}
	r.gamma = 1 / (float64(r.d) * variance)
	rng := rand.New(rand.NewPCG(r.seed, 0xd0b))
	r.w = make([]float32, r.d*r.D)
	sd := math.Sqrt(2 * r.gamma)
	for i := range r.w {
		r.w[i] = float32(sd * rng.NormFloat64())
	}
	r.b = make([]float32, r.D)
	for i := range r.b {
		r.b[i] = float32(2 * math.Pi * rng.Float64())
	}
}

// Embed returns the n×D random Fourier features of x.
func (r *RanDumb) Embed(x []float32, n int) []float32 {
	z := make([]float32, n*r.D)
	for i := 0; i < n; i++ {
		copy(z[i*r.D:(i+1)*r.D], r.b)
	}
	linalg.Sgemm(false, false, n, r.D, r.d, 1, x, r.d, r.w, r.D, 1, z, r.D)
	scale := math.Sqrt(2 / float64(r.D))
	for i, v := range z {
		z[i] = float32(scale * math.Cos(float64(v)))
	}
	return z
}

// LearnTask adds the task to the statistics and recomputes the classifier.
func (r *RanDumb) LearnTask(_ context.Context, x []float32, labels []int) error {
	n, err := checkXY(x, labels, r.d)
	if err != nil {
		return fmt.Errorf("randumb: %w", err)
	}
	if r.w == nil {
		r.init(x)
	}
	idx := r.cls.add(labels)
	for len(r.sums) < len(r.cls.labels) {
		r.sums = append(r.sums, make([]float64, r.D))
		r.counts = append(r.counts, 0)
	}
	z := r.Embed(x, n)
	D := r.D
	ridge.AddGram(r.zz, r.zzDiag, z, n, D)
	for i, c := range idx {
		for j, v := range z[i*D : (i+1)*D] {
			r.sums[c][j] += float64(v)
		}
		r.counts[c]++
	}
	r.n += n
	return r.solve()
}

// Covariance returns the pooled within-class covariance (D×D, float64),
// computed directly from the statistics (for inspection and tests).
func (r *RanDumb) Covariance() []float64 {
	D := r.D
	cov := make([]float64, D*D)
	for i := 0; i < D; i++ {
		for j := 0; j < i; j++ {
			cov[i*D+j] = float64(r.zz[i*D+j])
		}
		cov[i*D+i] = float64(r.zzDiag[i])
	}
	for c, s := range r.sums {
		inv := 1 / float64(r.counts[c])
		for i := 0; i < D; i++ {
			si := s[i] * inv
			for j := 0; j <= i; j++ {
				cov[i*D+j] -= si * s[j]
			}
		}
	}
	for i := 0; i < D; i++ {
		for j := 0; j <= i; j++ {
			cov[i*D+j] /= float64(r.n)
			cov[j*D+i] = cov[i*D+j]
		}
	}
	return cov
}

// OAS returns the OAS shrinkage of the empirical covariance cov (p×p)
// estimated from n samples, as scikit-learn's oas computes it.
func OAS(cov []float64, p, n int) float64 {
	var tr, sq float64
	for i := 0; i < p; i++ {
		tr += cov[i*p+i]
	}
	for _, v := range cov {
		sq += v * v
	}
	mu := tr / float64(p)
	alpha := sq / float64(p*p)
	num := alpha + mu*mu
	den := float64(n+1) * (alpha - mu*mu/float64(p))
	if den == 0 {
		return 1
	}
	return math.Min(num/den, 1)
}

// solve builds the shrunk covariance in the upper triangle of zz (the
// lower triangle keeps Σ zzᵀ), factors it in place and precomputes the
// discriminant of every class. Memory: the one D×D float32 matrix.
func (r *RanDumb) solve() error {
	D, nc := r.D, len(r.sums)
	// upper := −Σ_c s_c s_cᵀ / n_c, by one rank-C update
	sn := make([]float32, nc*D)
	for c, s := range r.sums {
		f := 1 / math.Sqrt(float64(r.counts[c]))
		for j, v := range s {
			sn[c*D+j] = float32(v * f)
		}
	}
	linalg.Ssyrk(true, D, nc, -1, sn, D, 0, r.zz, D)
	invN := 1 / float64(r.n)
	var tr, sq float64
	for i := 0; i < D; i++ {
		row := r.zz[i*D : (i+1)*D]
		v := (float64(r.zzDiag[i]) + float64(row[i])) * invN
		row[i] = float32(v)
		tr += v
		sq += v * v
		for j := i + 1; j < D; j++ {
			v := (float64(r.zz[j*D+i]) + float64(row[j])) * invN
			row[j] = float32(v)
			sq += 2 * v * v
		}
	}
	mu := tr / float64(D)
	alpha := sq / float64(D*D)
	sh := 1.0
	if den := float64(r.n+1) * (alpha - mu*mu/float64(D)); den != 0 {
		sh = math.Min((alpha+mu*mu)/den, 1)
	}
	for i := 0; i < D; i++ {
		row := r.zz[i*D : (i+1)*D]
		for j := i; j < D; j++ {
			row[j] = float32((1 - sh) * float64(row[j]))
		}
		row[i] = float32(float64(row[i]) + sh*mu)
	}
	if err := linalg.Spotrf(D, r.zz, D); err != nil {
		return fmt.Errorf("randumb: covariance: %w", err)
	}
	means := make([]float32, nc*D)
	for c, s := range r.sums {
		for j, v := range s {
			means[c*D+j] = float32(v / float64(r.counts[c]))
		}
	}
	proj := append([]float32(nil), means...)
	linalg.Spotrs(D, nc, r.zz, D, proj, D)
	r.bias = make([]float64, nc)
	for c := 0; c < nc; c++ {
		var q float64
		for j := 0; j < D; j++ {
			q += float64(means[c*D+j]) * float64(proj[c*D+j])
		}
		r.bias[c] = -q / 2
	}
	r.proj, r.Shrinkage = proj, sh
	return nil
}

// Predict returns the class of smallest Mahalanobis distance.
func (r *RanDumb) Predict(_ context.Context, x []float32) ([]int, error) {
	if r.proj == nil {
		return nil, fmt.Errorf("randumb: no class learned yet")
	}
	n, err := checkXY(x, nil, r.d)
	if err != nil {
		return nil, fmt.Errorf("randumb: %w", err)
	}
	nc := len(r.bias)
	out := make([]int, n)
	const chunk = 1024
	s := make([]float32, chunk*nc)
	for lo := 0; lo < n; lo += chunk {
		hi := min(n, lo+chunk)
		z := r.Embed(x[lo*r.d:hi*r.d], hi-lo)
		linalg.Sgemm(false, true, hi-lo, nc, r.D, 1, z, r.D, r.proj, r.D, 0, s, nc)
		for i := 0; i < hi-lo; i++ {
			best, bv := 0, math.Inf(-1)
			for c := 0; c < nc; c++ {
				if v := float64(s[i*nc+c]) + r.bias[c]; v > bv {
					best, bv = c, v
				}
			}
			out[lo+i] = r.cls.labels[best]
		}
	}
	return out, nil
}
