package ridge

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/flycl/flycl/linalg"
)

// BandWidth is the number of sub-diagonals GCVBand reduces K to. 64 is
// LAPACK's own choice for ssytrd_2stage on large matrices and was the
// fastest of 32/64/128 here (n=2000 and 5000, m=10000).
const BandWidth = 64

// gcvBand computes GCV on the whole grid from one orthogonal reduction of
// K = H Hᵀ (n×n) to a band matrix B = Qᵀ K Q with BandWidth sub-diagonals
// (LAPACK's BLAS-3 first stage of the two-stage tridiagonal reduction):
// for every λ,
//
//	Y − Ŷ = λ (K + λI)⁻¹ Y = λ Q (B + λI)⁻¹ QᵀY,
//	tr (K + λI)⁻¹ = tr (B + λI)⁻¹,
//
// so with QᵀY formed once, each grid value costs one banded Cholesky
// factorisation, a banded solve and a banded selected inversion
// (Takahashi's recurrences give the band of (B + λI)⁻¹, whose diagonal is
// all the trace needs), O(n·b²) flops in float64, instead of the O(n³) of
// a dense factorisation and inversion per value. The reduction costs about
// (4/3)n³ flops in float32, about 3 dense factorisation-and-inversions, so
// it pays from 4 grid values on. Like gcvDual nothing cancels: the banded
// steps are Cholesky-based, in float64. A λ too small for the float32
// rounding of K and of its reduction to decide its score gets +Inf (see
// bandNoiseFloor), as the dual method's failing float32 Cholesky and the
// statistics GCV (gcvStats) do.
func gcvBand(ctx context.Context, buf []float32, h []float32, n, m int, labels []int, nc int, grid []float64) ([]float64, error) {
	return gcvBandFloor(ctx, buf, h, n, m, labels, nc, grid, bandNoiseFloor)
}

// gcvBandFloor is gcvBand with the noise floor's factor given (tests
// use 0 to show what the floor excludes).
func gcvBandFloor(ctx context.Context, buf []float32, h []float32, n, m int, labels []int, nc int, grid []float64, noiseFloor float64) ([]float64, error) {
	kd := min(BandWidth, n-1)
	if kd < 1 {
		return gcvDual(ctx, buf, h, n, m, labels, nc, grid)
	}
	linalg.SsyrkLower(false, n, m, 1, h, m, 0, buf, n)
	mirrorLower(buf, n)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, y, _, err := reduceToBand(buf, n, kd, oneHotRows[float32](labels, nc, n), nc)
	if err != nil {
		return nil, fmt.Errorf("ridge: GCV: %w", err)
	}
	// Below the rounding noise of the float32 K (or not numerically
	// positive definite): not determinable, so it cannot be chosen (see
	// bandNoiseFloor).
	f.withNoiseFloor(grid, noiseFloor*u32*f.norm())
	return scoreGrid(ctx, grid, n, newDualScorer(f, y, n, nc))
}

// bandNoiseFloor, times u32·‖K‖₂, is the smallest eigenvalue of the
// computed B + λI below which gcvBand calls λ undeterminable.
//
// K is formed and reduced in float32: the computed band B is the exact
// reduction of K + E with ‖E‖₂ a few units of u32·‖K‖₂ (the reduction's
// Householder updates are normwise backward stable; rounding K's entries
// adds less). Where K is rank-deficient, or its small eigenvalues lie
// below that level, B has eigenvalues that are rounding noise of size
// ‖E‖₂, and for λ near them the band scores are meaningless, yet finite:
// a noise eigenvalue μ just above −λ makes λ/(μ + λ) ≫ 1, the trace term
// large and the score small, so such a λ could be chosen. (The dual
// method's float32 Cholesky of K + λI fails there and excludes it.)
// Measured on exactly rank-deficient codes (n = 300..1500, m = 500..3000,
// rank 40..1400, all eigenvalues of the computed B in float64): the noise
// eigenvalues stayed within 7.4·u32·‖K‖₂ (TestGCVBandRankDeficient checks
// the consequence: band, dual and SVD choose the same λ there).
// So a λ counts as determinable only if B + λI is positive definite with
// room to spare for twice that noise: λ_min(B) + λ > 16·u32·‖K‖₂.
// On MNIST pixel codes (n = 2000, m = 10000) λ_min(K) is 520..2600 and
// 16·u32·‖K‖₂ 170..210, so no λ of the 10⁻²..10⁹ grid is excluded there
// and every score agrees with the float64 definition to 4·10⁻⁵.
const bandNoiseFloor = 16

// bandRows converts a band in LAPACK's layout (ab[j*(kd+1) + i-j] =
// B[i][j], as SsytrdToBand and DsytrdToBand write it) to float64 rows:
// b[i*(kd+1) + kd-(i-j)] = B[i][j], the layout of bandCholesky and the
// other banded steps here.
func bandRows[T float32 | float64](ab []T, n, kd int) []float64 {
	w := kd + 1
	b := make([]float64, n*w)
	for j := 0; j < n; j++ {
		for d := 0; d <= kd && j+d < n; d++ {
			b[(j+d)*w+kd-d] = float64(ab[j*w+d])
		}
	}
	return b
}

// bandNorm returns an estimate of ‖B‖₂ from below by 30 steps of the
// power iteration (B is positive semi-definite up to rounding; the
// Rayleigh quotient converges to λ_max from below, fast when the top
// eigenvalue stands apart, as it does for codes with a mean). v and t are
// scratch of length n.
func bandNorm(b []float64, n, kd int, v, t []float64) float64 {
	for i := range v {
		v[i] = 1 + float64(i%7)/7 // deterministic, not orthogonal to a mean direction
	}
	var rq float64
	for it := 0; it < 30; it++ {
		var vv float64
		for _, x := range v {
			vv += x * x
		}
		if vv == 0 {
			return 0
		}
		bandMul(b, n, kd, v, t)
		var vt, tt float64
		for i := range v {
			vt += v[i] * t[i]
			tt += t[i] * t[i]
		}
		rq = vt / vv
		if tt == 0 {
			return 0
		}
		s := 1 / math.Sqrt(tt)
		for i := range v {
			v[i] = t[i] * s
		}
	}
	return math.Abs(rq)
}

// bandMul sets t = B v for the symmetric band b (rows as in gcvBand).
func bandMul(b []float64, n, kd int, v, t []float64) {
	w := kd + 1
	clear(t)
	for i := 0; i < n; i++ {
		bi := b[i*w : (i+1)*w] // bi[kd-(i-j)] = B[i][j]
		s := bi[kd] * v[i]
		for j := max(0, i-kd); j < i; j++ {
			e := bi[kd-(i-j)]
			s += e * v[j]
			t[j] += e * v[i]
		}
		t[i] += s
	}
}

// determinableFrom returns the smallest grid value λ with
// λ_min(B) + λ > floor (+Inf if none), i.e. for which B + (λ − floor)I is
// positive definite. That is monotone in λ, so the grid values are tried
// in ascending order and usually the first passes: one extra banded
// Cholesky factorisation. l is scratch.
func determinableFrom(b, l []float64, n, kd int, grid []float64, floor float64) float64 {
	for _, lambda := range slices.Sorted(slices.Values(grid)) {
		if bandCholesky(b, l, n, kd, lambda-floor) {
			return lambda
		}
	}
	return math.Inf(1)
}

// bandCholesky factors B + λI = L Lᵀ for the symmetric band b (rows as in
// gcvBand) into l (same layout, lower triangle). It reports false when a
// pivot is not positive.
func bandCholesky(b, l []float64, n, kd int, lambda float64) bool {
	w := kd + 1
	for i := 0; i < n; i++ {
		li := l[i*w : (i+1)*w] // li[kd-(i-j)] = L[i][j]
		for j := max(0, i-kd); j <= i; j++ {
			s := b[i*w+kd-(i-j)]
			if i == j {
				s += lambda
			}
			lj := l[j*w : (j+1)*w]
			// Σ_{k = max(i,j)-kd .. j-1} L[i][k] L[j][k]
			for k := max(0, i-kd); k < j; k++ {
				s -= li[kd-(i-k)] * lj[kd-(j-k)]
			}
			if i == j {
				if !(s > 0) {
					return false
				}
				li[kd] = math.Sqrt(s)
			} else {
				li[kd-(i-j)] = s / lj[kd]
			}
		}
	}
	return true
}

// bandSolve overwrites x with (L Lᵀ)⁻¹ x.
func bandSolve(l []float64, n, kd int, x []float64) {
	w := kd + 1
	for i := 0; i < n; i++ { // L y = x
		li := l[i*w : (i+1)*w]
		s := x[i]
		for k := max(0, i-kd); k < i; k++ {
			s -= li[kd-(i-k)] * x[k]
		}
		x[i] = s / li[kd]
	}
	for i := n - 1; i >= 0; i-- { // Lᵀ x = y
		s := x[i]
		for k := i + 1; k <= min(n-1, i+kd); k++ {
			s -= l[k*w+kd-(k-i)] * x[k]
		}
		x[i] = s / l[i*w+kd]
	}
}

// bandInverseTrace returns tr (L Lᵀ)⁻¹ by Takahashi's recurrences, which
// give the entries of Z = (L Lᵀ)⁻¹ inside the band from the last column
// back, each from entries of Z already known:
//
//	Z[i][j] = −(1/L[j][j]) Σ_{k=j+1..j+kd} L[k][j] Z[i][k]   (j < i ≤ j+kd)
//	Z[j][j] = 1/L[j][j]² − (1/L[j][j]) Σ_{k=j+1..j+kd} L[k][j] Z[k][j]
//
// z (same layout as l) receives the band of Z.
func bandInverseTrace(l, z []float64, n, kd int) float64 {
	w := kd + 1
	at := func(i, j int) float64 { // Z[i][j] for |i−j| ≤ kd, already computed
		if i < j {
			i, j = j, i
		}
		return z[i*w+kd-(i-j)]
	}
	var tr float64
	for j := n - 1; j >= 0; j-- {
		ljj := l[j*w+kd]
		hi := min(n-1, j+kd)
		for i := hi; i > j; i-- {
			var s float64
			for k := j + 1; k <= hi; k++ {
				s += l[k*w+kd-(k-j)] * at(i, k)
			}
			z[i*w+kd-(i-j)] = -s / ljj
		}
		var s float64
		for k := j + 1; k <= hi; k++ {
			s += l[k*w+kd-(k-j)] * z[k*w+kd-(k-j)]
		}
		zjj := 1/(ljj*ljj) - s/ljj
		z[j*w+kd] = zjj
		tr += zjj
	}
	return tr
}
