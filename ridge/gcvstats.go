package ridge

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/flycl/flycl/linalg"
)

// Relative accuracy of the Gram matrices gcvTridiag is given, as a fraction of
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
// samples (see gcvTridiag), with float64 statistics of dimension m added.
func accRelErr(n, m int) float64 {
	if n == 0 {
		return statsRelErr(m)
	}
	return 2*u32*math.Sqrt(float64(n)) + statsRelErr(m)
}

// GCVAll returns the GCV score of each λ in grid for ridge regression on
// every sample accumulated so far, computed exactly from the accumulated
// statistics G, S and the sample count, without the samples (Fly-CL's
// --gcv-scope all; see gcvTridiag for the method). G is the accumulator's
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
	return gcvTridiag(ctx, g, m, s, nc, float64(total), total, grid, accRelErr(a.n, m))
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
	return gcvTridiag(ctx, g, m, s, nc, float64(total), total, grid, accRelErr(a.n, m))
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

// gcvTridiag computes GCV scores from the Gram matrix alone, the primal form
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
// One float64 tridiagonal reduction G = Q T Qᵀ (Householder) serves every
// λ: Qᵀ S is formed once, each λ is an O(m·classes) LDLᵀ solve of the
// tridiagonal T + λI, and the eigenvalues come from T in O(m²).
//
// g (m×m, upper triangle filled) and s (nc×m) are destroyed. yy = ‖Y‖²_F.
// relErr bounds the errors of g and s as fractions of ‖G‖₂ and ‖S‖_F; a λ
// whose residual the resulting error could decide (first-order bound
// 3‖ΔG‖₂‖C‖²_F + 4‖ΔS‖_F‖C‖_F on the fitted part) is given a score of +Inf.
func gcvTridiag(ctx context.Context, g []float64, m int, s []float64, nc int, yy float64, n int, grid []float64, relErr float64) ([]float64, error) {
	if err := checkGrid(grid); err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, fmt.Errorf("ridge: GCV of empty statistics")
	}
	d := make([]float64, m)
	e := make([]float64, max(m-1, 0))
	tau := make([]float64, max(m-1, 0))
	if err := linalg.Dsytrd(m, g, m, d, e, tau); err != nil {
		return nil, fmt.Errorf("ridge: GCV: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var sNorm float64 // ‖S‖_F
	for _, v := range s[:nc*m] {
		sNorm += v * v
	}
	sNorm = math.Sqrt(sNorm)
	linalg.DormtrRows(m, nc, g, m, tau, s, m)
	g = nil
	// eigenvalues of T, descending, clamped at 0 (G is positive semi-definite)
	sig := slices.Clone(d)
	if err := linalg.Dsterf(m, sig, slices.Clone(e)); err != nil {
		return nil, fmt.Errorf("ridge: GCV: %w", err)
	}
	slices.Reverse(sig)
	for i := range sig {
		sig[i] = max(sig[i], 0)
	}
	r := min(n, m)
	delta := relErr * sig[0] // error of G in 2-norm
	ldl := make([]float64, m)
	low := make([]float64, max(m-1, 0))
	x := make([]float64, m)
	scores := make([]float64, len(grid))
	for gi, lambda := range grid {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// LDLᵀ of T + λI
		ok := true
		ldl[0] = d[0] + lambda
		for i := 1; i < m && ok; i++ {
			low[i-1] = e[i-1] / ldl[i-1]
			ldl[i] = d[i] + lambda - low[i-1]*e[i-1]
			ok = ldl[i] > 0
		}
		if !ok || !(ldl[0] > 0) {
			scores[gi] = math.Inf(1)
			continue
		}
		var fit, cc float64 // tr SᵀC + λ‖C‖², ‖C‖²
		for c := 0; c < nc; c++ {
			b := s[c*m : (c+1)*m]
			x[0] = b[0]
			for i := 1; i < m; i++ {
				x[i] = b[i] - low[i-1]*x[i-1]
			}
			for i := range x {
				x[i] /= ldl[i]
			}
			for i := m - 2; i >= 0; i-- {
				x[i] -= low[i] * x[i+1]
			}
			for i, v := range x {
				fit += b[i]*v + lambda*v*v
				cc += v * v
			}
		}
		rss := yy - fit
		// First-order error of the fitted part F = tr SᵀA⁻¹S + λ tr SᵀA⁻²S
		// (A = G + λI) under errors ΔG, ΔS: dF = −tr CᵀΔG C − 2λ tr CᵀΔG A⁻¹C
		// + 2 tr ΔSᵀC + 2λ tr ΔSᵀA⁻¹C, so |dF| ≤ 3‖ΔG‖₂‖C‖²_F + 4‖ΔS‖_F‖C‖_F
		// (‖A⁻¹‖ ≤ 1/λ); plus the rounding of the float64 sums.
		bound := 3*delta*cc + 4*relErr*sNorm*math.Sqrt(cc) + 8*float64(m)*u64*(yy+fit)
		var den float64
		if n > m {
			den = float64(n - m)
		}
		for _, sv := range sig[:r] {
			den += lambda / (sv + lambda)
		}
		den /= float64(n)
		if !(rss > bound) {
			scores[gi] = math.Inf(1) // not determinable from these statistics
			continue
		}
		scores[gi] = (rss / float64(n)) / (den * den)
	}
	if math.IsInf(scores[BestLambda(scores)], 1) {
		return nil, fmt.Errorf("ridge: GCV: no lambda in %v has a residual the statistics determine (all too small for their rounding); use larger lambdas", grid)
	}
	return scores, nil
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
