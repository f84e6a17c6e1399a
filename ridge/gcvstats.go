package ridge

import (
	"context"
	"fmt"
	"math"

	"github.com/flycl/flycl/linalg"
)

// Relative accuracy of the Gram matrices gcvStats is given, as a fraction of
// ‖G‖₂: statistics accumulated in float64 (Stats) carry rounding of a few
// units of 2⁻⁵³ per addition, and the Householder reduction a backward
// error of order m units; an Accumulator's float32 G carries the rounding
// of float32 sums (about √n units of 2⁻²⁴, n the samples summed).
const (
	u64 = 0x1p-53
	u32 = 0x1p-24
)

// statsRelErr is the relative accuracy of float64 statistics of dimension m.
func statsRelErr(m int) float64 { return 4 * float64(m+16) * u64 }

// accRelErr is the relative accuracy of an Accumulator's float32 G after n
// samples (see gcvStats), with float64 statistics of dimension m added.
func accRelErr(n, m int) float64 {
	if n == 0 {
		return statsRelErr(m)
	}
	return 2*u32*math.Sqrt(float64(n)) + statsRelErr(m)
}

// GCVAll returns the GCV score of each λ in grid for ridge regression on
// every sample accumulated so far, computed exactly from the accumulated
// statistics G, S and the sample count, without the samples (Fly-CL's
// --gcv-scope all; see gcvStats for the method). G is the accumulator's
// float32 G, so a λ small enough for G's float32 rounding to decide its
// score gets +Inf (not determinable: it cannot be chosen).
func (a *Accumulator) GCVAll(ctx context.Context, grid []float64) ([]float64, error) {
	return a.GCVAllWith(ctx, nil, 0, nil, grid)
}

// GCVAllWith is GCVAll on the accumulated statistics plus the n×m codes h
// with class indices idx (as Add would take them), without adding them: it
// is what GCVAll would return after Add, with the new codes' Gram summed
// in float64, so a failure leaves the accumulator untouched.
func (a *Accumulator) GCVAllWith(ctx context.Context, h []float32, n int, idx []int, grid []float64) ([]float64, error) {
	return a.gcvAllWith(ctx, h, n, idx, grid, bandStatsMin)
}

func (a *Accumulator) gcvAllWith(ctx context.Context, h []float32, n int, idx []int, grid []float64, bandMin int) ([]float64, error) {
	if len(h) != n*a.m || len(idx) != n {
		return nil, fmt.Errorf("ridge: GCV: %d values and %d labels for %d samples of dimension %d", len(h), len(idx), n, a.m)
	}
	g, s, nc, err := a.float64Stats(idx)
	if err != nil {
		return nil, err
	}
	m := a.m
	if n > 0 {
		hd := make([]float64, len(h))
		for i, v := range h {
			hd[i] = float64(v)
		}
		linalg.Dsyrk(true, m, n, 1, hd, m, 1, g, m)
		for i, c := range idx {
			row := s[c*m : (c+1)*m]
			for j, v := range hd[i*m : (i+1)*m] {
				row[j] += v
			}
		}
	}
	total := a.n + n
	// Only the accumulated part of G is float32 (its error grows with the
	// a.n samples summed in float32); the new codes are summed in float64.
	return gcvStats(ctx, g, m, s, nc, float64(total), total, grid, accRelErr(a.n, m), bandMin)
}

// GCVAllWithStats is GCVAllWith for a task given by its statistics st,
// whose labels map to the accumulator's class indices classIndex.
func (a *Accumulator) GCVAllWithStats(ctx context.Context, st *Stats, classIndex []int, grid []float64) ([]float64, error) {
	if st.M != a.m {
		return nil, fmt.Errorf("ridge: statistics have dimension %d, accumulator %d", st.M, a.m)
	}
	if err := st.Check(); err != nil {
		return nil, err
	}
	if len(classIndex) != len(st.Labels) {
		return nil, fmt.Errorf("ridge: %d class indices for %d labels", len(classIndex), len(st.Labels))
	}
	g, s, nc, err := a.float64Stats(classIndex)
	if err != nil {
		return nil, err
	}
	m := a.m
	for i := 0; i < m; i++ {
		for j, v := range st.G[i*(i+1)/2 : i*(i+1)/2+i+1] {
			g[j*m+i] += v
		}
	}
	for r, c := range classIndex {
		row := s[c*m : (c+1)*m]
		for j, v := range st.S[r*m : (r+1)*m] {
			row[j] += v
		}
	}
	total := a.n + st.N
	return gcvStats(ctx, g, m, s, nc, float64(total), total, grid, accRelErr(a.n, m), bandStatsMin)
}

// float64Stats returns G (m×m, upper triangle) and S in float64, S with
// room for the class indices idx.
func (a *Accumulator) float64Stats(idx []int) (g, s []float64, nc int, err error) {
	nc = a.nc
	for _, c := range idx {
		if c < 0 {
			return nil, nil, 0, fmt.Errorf("ridge: negative class index %d", c)
		}
		nc = max(nc, c+1)
	}
	if a.n == 0 && len(idx) == 0 {
		return nil, nil, 0, fmt.Errorf("ridge: GCV of empty statistics")
	}
	m := a.m
	g = make([]float64, m*m)
	for i := 0; i < m; i++ {
		for j, v := range a.buf[i*m : i*m+i] {
			g[j*m+i] = float64(v)
		}
		g[i*m+i] = float64(a.diag[i])
	}
	s = make([]float64, nc*m)
	for i, v := range a.s {
		s[i] = float64(v)
	}
	return g, s, nc, nil
}

// gcvStats computes GCV scores from the Gram matrix alone, the primal form
// of GCV for data that are no longer at hand:
//
//	C = (G + λI)⁻¹ S,  ‖Y − HC‖² = ‖Y‖² − tr SᵀC − λ‖C‖²,
//	1 − df/n = (max(n−m, 0) + Σ_{i<min(n,m)} λ/(σ_i + λ)) / n,
//
// σ_i the eigenvalues of G in descending order. The residual formula
// follows from GC = S − λC; its one subtraction, ‖Y‖² minus the fitted
// part, is intrinsic to statistics (the part of Y outside the span of H is
// known only as that difference) and is done in float64. The degrees of
// freedom avoid the cancellation of n − m + λ tr(G+λI)⁻¹ when n < m by
// using that G has rank at most min(n, m): its other eigenvalues are zero
// exactly, contribute exactly 1 each to λ tr(G+λI)⁻¹, and cancel with −m
// analytically, so only the positive terms of the top min(n, m) eigenvalues
// are summed.
//
// One float64 orthogonal reduction G = Q R Qᵀ serves every λ: Qᵀ S is
// formed once, the eigenvalues come from R, and each λ is a factorisation
// and solve of R + λI for the classes. R is a band matrix with BandWidth
// sub-diagonals where LAPACK's two-stage reduction is at hand and m >
// bandStatsMin (its first stage is BLAS-3; the one-stage Householder
// tridiagonalisation spends half its flops in memory-bound BLAS-2: the
// whole GCV at m = 10000, 12 λ, took 55.7 s tridiagonal against 25.5 s
// band on the quiet 2-core EPYC, 57.8 against 39.3 s with
// OPENBLAS_CORETYPE=Haswell, BenchmarkGCVFromStatistics with
// FLYCL_BENCH_M=10000), otherwise tridiagonal (pure-Go backend, small m).
//
// g (m×m, upper triangle filled) and s (nc×m) are destroyed. yy = ‖Y‖²_F.
// relErr bounds the errors of g and s as fractions of ‖G‖₂ and ‖S‖_F; a λ
// whose residual the resulting error could decide (first-order bound
// 3‖ΔG‖₂‖C‖²_F + 4‖ΔS‖_F‖C‖_F on the fitted part) is given a score of +Inf.
// Both reductions are backward stable in float64 (error of order m units
// of 2⁻⁵³ of ‖G‖, inside statsRelErr), so the method changes the scores
// only at that level.
//
// bandMin is the dimension above which the band reduction is used
// (bandStatsMin; tests lower it to check both).
func gcvStats(ctx context.Context, g []float64, m int, s []float64, nc int, yy float64, n int, grid []float64, relErr float64, bandMin int) ([]float64, error) {
	if err := checkGrid(grid); err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, fmt.Errorf("ridge: GCV of empty statistics")
	}
	var sNorm float64 // ‖S‖_F
	for _, v := range s[:nc*m] {
		sNorm += v * v
	}
	sNorm = math.Sqrt(sNorm)
	var (
		f   shifted[float64]
		err error
		sig []float64 // eigenvalues, descending, clamped at 0 (G is positive semi-definite)
	)
	s = s[:nc*m]
	if linalg.HaveBandReduction && m > bandMin && m > 1 {
		var r *band
		r, s, sig, err = reduceBand(g, m, s, nc)
		f = r
	} else {
		var t *tridiag
		if t, err = reduceTridiag(g, m, s, nc); err == nil {
			f, sig = t, t.eigenvalues()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("ridge: GCV: %w", err)
	}
	g = nil
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if sig == nil {
		return nil, fmt.Errorf("ridge: GCV: eigenvalues of the reduced statistics did not converge")
	}
	p := newPrimalScorer(f, s, n, m, nc).fromStatistics(yy, relErr, sig[0], sNorm)
	p.spectrum = sig
	scores, err := scoreGrid(ctx, grid, n, p)
	if err != nil {
		return nil, err
	}
	if math.IsInf(scores[BestLambda(scores)], 1) {
		return nil, fmt.Errorf("ridge: GCV: no lambda in %v has a residual the statistics determine (all too small for their rounding); use larger lambdas", grid)
	}
	return scores, nil
}

// bandStatsMin is the dimension above which gcvStats reduces G to a band
// rather than to a tridiagonal matrix. Measured on the 2-core EPYC (with a
// niced background job): m = 2000, 12 λ, 0.55 s tridiagonal against 0.70 s
// band (BenchmarkGCVFromStatistics); m = 3000, reduction and eigenvalues,
// 2.2 s against 1.7 s; m = 10000 see gcvStats.
const bandStatsMin = 2500

// reduceBand reduces the symmetric g (m×m, upper triangle read) to a band
// of min(BandWidth, m/4) sub-diagonals in float64 (reduceToBand),
// destroying g, and returns its factorisation, the nc rows of s in its
// basis, and its eigenvalues, descending and clamped at 0 (nil if they did
// not converge).
func reduceBand(g []float64, m int, s []float64, nc int) (*band, []float64, []float64, error) {
	kd := min(BandWidth, max(m/4, 1))
	f, rows, ab, err := reduceToBand(g, m, kd, s, nc)
	if err != nil {
		return nil, nil, nil, err
	}
	sig := make([]float64, m)
	if err := linalg.DbandEigenvalues(m, kd, ab, sig); err != nil {
		return f, rows, nil, nil
	}
	return f, rows, descendingNonNegative(sig), nil
}

func checkGrid(grid []float64) error {
	if len(grid) == 0 {
		return fmt.Errorf("ridge: GCV: empty lambda grid")
	}
	for _, l := range grid {
		if !(l > 0) || math.IsInf(l, 0) {
			return fmt.Errorf("ridge: GCV: lambda %g is not a positive finite number", l)
		}
	}
	return nil
}
