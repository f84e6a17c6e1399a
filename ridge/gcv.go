package ridge

import (
	"context"
	"fmt"
	"math"

	"github.com/flycl/flycl/linalg"
)

// GCVMethod selects how GCV scores are computed. All methods compute the
// same quantity exactly (up to rounding); they differ in cost.
type GCVMethod int

const (
	// GCVAuto picks GCVPrimal when n > m. When n <= m it picks GCVBand
	// for grids of BandGridMin values or more and tasks of more than
	// BandMinSamples samples (where OpenBLAS is there), else GCVDual
	// (GCVEigen for grids longer than EigenGridThreshold).
	GCVAuto GCVMethod = iota
	// GCVDual factors K + λI for each λ, with K = H Hᵀ (n×n).
	GCVDual
	// GCVPrimal factors Hᵀ H + λI for each λ (m×m). With fewer samples
	// than dimensions its trace term cancels (see GCVGram), so then it
	// works in float64.
	GCVPrimal
	// GCVEigen eigendecomposes K once in float64.
	GCVEigen
	// GCVBand reduces K once to a band matrix by an orthogonal similarity
	// (LAPACK's ssytrd_sy2sb), then costs O(n·b²) per grid value: the
	// whole grid for about the price of three dense factorisations. When
	// n >= m it reduces the task's Gram HᵀH (m×m) instead, which the
	// statistics update can then reuse (Workspace.TaskGram). It needs
	// OpenBLAS (linalg.HaveBandReduction).
	GCVBand
)

// EigenGridThreshold is the grid length above which GCVAuto uses GCVEigen
// (when n <= m). Measured on 2 cores (BenchmarkGCV, n=2000, m=4000): dual
// 0.28 s for 4 values and 0.82 s for 17, eigen 0.93-0.97 s for either.
const EigenGridThreshold = 16

func (g GCVMethod) String() string {
	switch g {
	case GCVDual:
		return "dual"
	case GCVPrimal:
		return "primal"
	case GCVEigen:
		return "eigen"
	case GCVBand:
		return "band"
	}
	return "auto"
}

// ParseGCVMethod parses "auto", "dual", "primal", "eigen" or "band".
func ParseGCVMethod(s string) (GCVMethod, error) {
	switch s {
	case "auto", "":
		return GCVAuto, nil
	case "dual":
		return GCVDual, nil
	case "primal":
		return GCVPrimal, nil
	case "eigen":
		return GCVEigen, nil
	case "band":
		return GCVBand, nil
	}
	return GCVAuto, fmt.Errorf("ridge: unknown GCV method %q (want auto, dual, primal, eigen or band)", s)
}

// MarshalText writes the method's name ("auto", "dual", "primal", "eigen"
// or "band"); a value that is none of them is an error.
func (g GCVMethod) MarshalText() ([]byte, error) {
	if g != GCVAuto && g.String() == "auto" {
		return nil, fmt.Errorf("ridge: invalid GCV method %d", int(g))
	}
	return []byte(g.String()), nil
}

// UnmarshalText parses a method's name (ParseGCVMethod).
func (g *GCVMethod) UnmarshalText(b []byte) error {
	v, err := ParseGCVMethod(string(b))
	if err != nil {
		return err
	}
	*g = v
	return nil
}

// Resolve returns the concrete method GCVAuto stands for at this size.
func (g GCVMethod) Resolve(n, m, gridLen int) GCVMethod {
	if g != GCVAuto {
		return g
	}
	if n > m {
		return GCVPrimal
	}
	if linalg.HaveBandReduction && gridLen >= BandGridMin && n > BandMinSamples {
		return GCVBand
	}
	if gridLen > EigenGridThreshold {
		return GCVEigen
	}
	return GCVDual
}

// BandGridMin is the shortest grid for which GCVAuto uses GCVBand (when
// n <= m and OpenBLAS is there). Per grid value the dual method pays one
// dense Cholesky factorisation and triangular inverse of K + λI,
// (2/3)n³ flops; the band method pays the reduction of K, (4/3)n³ flops
// of BLAS-3 once, and O(n·BandWidth²) per value, so it breaks even near 2
// values by flops; the reduction runs at a lower rate than spotrf, and
// measured (flycl bench engine, 2 cores, both OpenBLAS settings) band
// wins from 4 values: GCV per task 2.8 s vs 3.3 s at n = 5000, m = 10000
// (CIFAR-100 scale), 0.05 s vs 0.11 s at n = 600 (CUB scale); 2.9 s vs
// 6.3 s with 10 values; 14.4 s vs 25.7 s at n = m = 10000 with 6.
const BandGridMin = 4

// BandMinSamples is the task size above which GCVAuto may use GCVBand.
// Below it the band method's fixed costs (power iteration, Qᵀ applied by
// panels, a floor check) outweigh the dual's small factorisations, and on
// rank-deficient inputs it exposes a cost the dual hides: the dual's float32
// Cholesky of K + λI fails for λ below the rounding of K and so never
// chooses them, whereas the band scores them exactly (in float64), and on a
// GCV curve that is flat there it may choose a λ for which the m×m solve
// must then be raised, one failed factorisation per grid step. Measured
// quietly (flycl bench engine, 2 cores, both OpenBLAS settings): GCV at
// n = 600 (CUB scale) 0.044 s dual vs 0.061 s band per task; make demo
// (MNIST pixels, n = 2000, 12 values) τ_post per Fly-CL task about 2×
// the dual's on the tasks where the band's pick had to be raised; at
// n = 5000 band wins (3.0 vs 3.5-4.1 s), and at n = m = 10000 it reduces
// the task's Gram once for both GCV and the update (14.7-17.5 vs 27-31 s).
const BandMinSamples = 2048

// GCV returns, for each λ in grid, the generalised cross-validation score
// of ridge regression of the one-hot targets Y (labels in [0,nc)) on the
// n×m inputs h (no centring, no bias):
//
//	GCV(λ) = (‖Y − Ŷ‖²_F / n) / (1 − df/n)²,  Ŷ = H (HᵀH + λI)⁻¹ Hᵀ Y,
//	df = tr(H (HᵀH + λI)⁻¹ Hᵀ) = Σ s²/(s²+λ).
//
// The dual form uses Y − Ŷ = λ (K+λI)⁻¹ Y and 1 − df/n = λ tr((K+λI)⁻¹)/n
// with K = H Hᵀ, and tr((K+λI)⁻¹) = ‖U⁻¹‖²_F for the Cholesky factor U,
// so nothing is computed by subtracting nearly equal numbers.
func GCV(ctx context.Context, h []float32, n, m int, labels []int, nc int, grid []float64, method GCVMethod) ([]float64, error) {
	var ws Workspace
	return ws.GCV(ctx, h, n, m, labels, nc, grid, method)
}

// Workspace keeps the scratch memory of GCV between calls, so that a
// sequence of tasks does not allocate (and page in) it again each time.
// The zero value is ready to use.
type Workspace struct {
	buf []float32
	// the Gram matrix of the last scored codes, when the last GCV call
	// formed it (see TaskGram): strict lower triangle in buf, diagonal here
	gdiag        []float32
	gramOf       *float32 // &h[0] of those codes
	gramN, gramM int
}

func (w *Workspace) get(n int) []float32 {
	if cap(w.buf) < n {
		w.buf = make([]float32, n)
	}
	return w.buf[:n]
}

// Release drops the scratch memory.
func (w *Workspace) Release() { *w = Workspace{} }

// GCV is the package-level GCV using the workspace's memory.
func (w *Workspace) GCV(ctx context.Context, h []float32, n, m int, labels []int, nc int, grid []float64, method GCVMethod) ([]float64, error) {
	if n == 0 {
		return nil, fmt.Errorf("ridge: GCV of an empty task")
	}
	if len(h) != n*m {
		return nil, fmt.Errorf("ridge: GCV input has %d values, want %d×%d", len(h), n, m)
	}
	if len(labels) != n {
		return nil, fmt.Errorf("ridge: GCV: %d labels for %d samples", len(labels), n)
	}
	if err := checkGrid(grid); err != nil {
		return nil, err
	}
	for i, l := range labels {
		if l < 0 || l >= nc {
			return nil, fmt.Errorf("ridge: GCV: sample %d has class index %d outside [0,%d)", i, l, nc)
		}
	}
	w.gramOf, w.gramN, w.gramM = nil, 0, 0
	var scores []float64
	var err error
	switch method.Resolve(n, m, len(grid)) {
	case GCVPrimal:
		if n < m {
			scores, err = gcvPrimal64(ctx, h, n, m, labels, nc, grid)
			break
		}
		scores, err = gcvPrimal(ctx, w.get(m*m), h, n, m, labels, nc, grid)
	case GCVEigen:
		scores, err = gcvEigen(ctx, h, n, m, labels, nc, grid)
	case GCVBand:
		if !linalg.HaveBandReduction {
			return nil, fmt.Errorf("ridge: GCV method band needs OpenBLAS; this build uses the pure-Go backend")
		}
		if n >= m && m < 2 {
			scores, err = gcvPrimal(ctx, w.get(m*m), h, n, m, labels, nc, grid)
			break
		}
		if n >= m {
			if cap(w.gdiag) < m {
				w.gdiag = make([]float32, m)
			}
			scores, err = gcvBandPrimal(ctx, w.get(m*m), w.gdiag[:m], h, n, m, labels, nc, grid)
			if err == nil {
				w.gramOf, w.gramN, w.gramM = &h[0], n, m
			}
			break
		}
		scores, err = gcvBand(ctx, w.get(n*n), h, n, m, labels, nc, grid)
	default:
		scores, err = gcvDual(ctx, w.get(n*n), h, n, m, labels, nc, grid)
	}
	if err != nil {
		return nil, err
	}
	if math.IsInf(scores[BestLambda(scores)], 1) {
		w.gramOf, w.gramN, w.gramM = nil, 0, 0
		return nil, fmt.Errorf("ridge: GCV: no lambda in %v gives a numerically positive definite system whose score is determinable (all too small for the float32 rounding of the codes' Gram); use larger lambdas", grid)
	}
	return scores, nil
}

// BestLambda returns the index of the first minimum of scores.
func BestLambda(scores []float64) int {
	best := 0
	for i, s := range scores {
		if s < scores[best] || math.IsNaN(scores[best]) && !math.IsNaN(s) {
			best = i
		}
	}
	return best
}

// oneHotRows returns the one-hot targets Y transposed: row c (of n) is
// column c of Y.
func oneHotRows[T float32 | float64](labels []int, nc, n int) []T {
	y := make([]T, nc*n)
	for i, l := range labels {
		y[l*n+i] = 1
	}
	return y
}

// classSums returns Sᵀ = YᵀH for the n×m codes h, summed in T: row c
// (of length m) is the sum of the codes of class c.
func classSums[T float32 | float64](h []float32, m int, labels []int, nc int) []T {
	s := make([]T, nc*m)
	for i, l := range labels {
		row := s[l*m : (l+1)*m]
		for j, v := range h[i*m : (i+1)*m] {
			row[j] += T(v)
		}
	}
	return s
}

// gcvDual is the dual method: K = H Hᵀ (n×n) in the strict lower
// triangle of buf plus a separate diagonal, K + λI factored in float32 in
// the upper triangle of the same buffer, so one n×n matrix serves every
// λ; tr (K + λI)⁻¹ = ‖U⁻¹‖²_F for the Cholesky factor U. A λ for which
// K + λI is not numerically positive definite in float32 cannot be used,
// so it scores +Inf.
func gcvDual(ctx context.Context, buf []float32, h []float32, n, m int, labels []int, nc int, grid []float64) ([]float64, error) {
	linalg.SsyrkLower(false, n, m, 1, h, m, 0, buf, n)
	f := newDense(buf, n)
	return scoreGrid(ctx, grid, n, newDualScorer(f, oneHotRows[float32](labels, nc, n), n, nc))
}

// gcvPrimal is the primal method in float32 (for n >= m; see GCVGram for
// n < m): G = HᵀH (m×m) kept and factored like gcvDual's K, and the
// residual computed from the data, Ŷᵀ = Cᵀ Hᵀ, so that it does not
// cancel.
func gcvPrimal(ctx context.Context, buf []float32, h []float32, n, m int, labels []int, nc int, grid []float64) ([]float64, error) {
	linalg.SsyrkLower(true, m, n, 1, h, m, 0, buf, m)
	f := newDense(buf, m)
	z := classSums[float32](h, m, labels, nc)
	yt := oneHotRows[float32](labels, nc, n)
	yhat := make([]float32, nc*n)
	p := newPrimalScorer(f, z, n, m, nc)
	p.residual = func(b []float32) float64 {
		// Ŷᵀ = B Hᵀ
		linalg.Sgemm(false, true, nc, n, m, 1, b, m, h, m, 0, yhat, n)
		var rss float64
		for i, v := range yhat {
			d := float64(yt[i]) - float64(v)
			rss += d * d
		}
		return rss
	}
	return scoreGrid(ctx, grid, n, p)
}

// gcvEigen is the eigen method: K = U Σ Uᵀ once in float64, then each λ
// costs O(n·nc).
func gcvEigen(ctx context.Context, h []float32, n, m int, labels []int, nc int, grid []float64) ([]float64, error) {
	k32 := make([]float32, n*n)
	linalg.Ssyrk(false, n, m, 1, h, m, 0, k32, n)
	k := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			k[i*n+j] = float64(k32[i*n+j])
		}
	}
	k32 = nil
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	y := oneHotRows[float64](labels, nc, n)
	f, err := eigenOf(k, n, y, nc)
	if err != nil {
		return nil, fmt.Errorf("ridge: GCV: %w", err)
	}
	return scoreGrid(ctx, grid, n, newDualScorer(f, y, n, nc))
}
