package ridge

import (
	"context"
	"math"
)

// Every GCV method of this package is one factorisation of a shifted
// symmetric matrix (shifted; the implementations are in shifted.go) under
// one of two scorers, and the scorers are scored by one loop:
//
//	method               scorer  factorisation of            implementation
//	GCVDual              dual    K + λI (float32)            dense[float32]
//	GCVEigen             dual    K + λI, K = U Σ Uᵀ          eigen
//	GCVBand, n < m       dual    K + λI, K = Q B Qᵀ          band (B from float32)
//	GCVPrimal, n >= m    primal  G + λI (float32), Ŷ = H C   dense[float32]
//	GCVPrimal, n < m     primal  G + λI (float64)            dense[float64]
//	GCVBand, n >= m      primal  G + λI, G = Q B Qᵀ          band (B from float32)
//	GCVGram              primal  G + λI (float64)            dense[float64]
//	statistics (Stats,   primal  G + λI, G = Q R Qᵀ          tridiag, or band
//	Accumulator.GCVAll)                                      (R from float64)
//
// The methods differ in cost (see GCVMethod and each constructor); the
// formula below and its λ loop are written once.

// shifted is a factorisation of A + λI, one λ at a time, for a symmetric
// positive semi-definite A of order n: K = H Hᵀ or G = HᵀH, possibly
// represented in an orthogonal basis Q (A = Q R Qᵀ) in which the caller
// has expressed the right-hand sides (QᵀY, QᵀS) once for the whole grid.
// It is what the GCV scorers need of a method, in the manner of gonum's
// factorisation types (Factorize, SolveTo, and the trace of the inverse).
type shifted[T float32 | float64] interface {
	// factor factors A + λI. It reports false when λ cannot be scored:
	// A + λI is not numerically positive definite, or λ lies below what
	// the rounding of A determines (see bandNoiseFloor).
	factor(lambda float64) bool
	// solve overwrites the nrhs rows of x, each of length n, with
	// (A + λI)⁻¹ x for the λ last factored.
	solve(x []T, nrhs int)
	// invTrace returns tr (A + λI)⁻¹ for the λ last factored, or false
	// if it cannot be formed. It may consume the factor, so a scorer
	// calls it after solve.
	invTrace() (float64, bool)
}

// gcvScorer gives the two terms of the GCV score at λ: the residual sum
// of squares ‖Y − Ŷ‖²_F and 1 − df/n. ok is false when λ's score is not
// determinable; it then scores +Inf and cannot be chosen.
type gcvScorer interface {
	terms(lambda float64) (rss, oneMinusDF float64, ok bool)
}

// scoreGrid returns the GCV score of each λ in grid,
//
//	GCV(λ) = (‖Y − Ŷ‖²_F / n) / (1 − df/n)²,
//
// from the scorer's terms, n the number of samples. A λ whose terms are
// not determinable, or whose 1 − df/n is not positive (only rounding
// makes it so), scores +Inf. It checks ctx before each λ.
func scoreGrid(ctx context.Context, grid []float64, n int, s gcvScorer) ([]float64, error) {
	scores := make([]float64, len(grid))
	for gi, lambda := range grid {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rss, den, ok := s.terms(lambda)
		if !ok || !(den > 0) {
			scores[gi] = math.Inf(1)
			continue
		}
		scores[gi] = (rss / float64(n)) / (den * den)
	}
	return scores, nil
}

// dualScorer scores with the dual form, on K = H Hᵀ (n×n):
//
//	Y − Ŷ = λ (K + λI)⁻¹ Y,  1 − df/n = λ tr (K + λI)⁻¹ / n,
//
// so nothing is computed by subtracting nearly equal numbers.
type dualScorer[T float32 | float64] struct {
	f    shifted[T]
	y, x []T // Y (in f's basis; row c is column c of Y), and scratch
	n    int // samples: the order of K
	nc   int // classes: the rows of y
}

func newDualScorer[T float32 | float64](f shifted[T], y []T, n, nc int) *dualScorer[T] {
	return &dualScorer[T]{f: f, y: y, x: make([]T, len(y)), n: n, nc: nc}
}

func (d *dualScorer[T]) terms(lambda float64) (rss, den float64, ok bool) {
	if !d.f.factor(lambda) {
		return 0, 0, false
	}
	copy(d.x, d.y)
	d.f.solve(d.x, d.nc)
	rss = lambda * lambda * sumSq(d.x)
	tr, ok := d.f.invTrace()
	return rss, lambda * tr / float64(d.n), ok
}

// primalScorer scores with the primal form, on G = HᵀH (m×m) and
// S = HᵀY: with C = (G + λI)⁻¹ S,
//
//	1 − df/n = (n − m + λ tr (G + λI)⁻¹) / n,
//
// or, when the spectrum of G is known, (max(n − m, 0) + Σ_{i<min(n,m)}
// λ/(σ_i + λ)) / n, which leaves out the m − n zero eigenvalues of G that
// n − m would cancel when n < m. The residual is ‖Y − HC‖²_F from the
// data when they are at hand (residual), else from the statistics,
//
//	‖Y − HC‖²_F = ‖Y‖²_F − tr SᵀC − λ‖C‖²_F   (GC = S − λC),
//
// a difference intrinsic to statistics (the part of Y outside the span
// of H is known only that way), done in float64 and accepted only above
// its first-order error bound (see gcvStats).
type primalScorer[T float32 | float64] struct {
	f    shifted[T]
	s, x []T // S (in f's basis; row c is column c of S), and scratch
	n, m int // samples, dimension
	nc   int // classes: the rows of s

	// residual, when set, returns ‖Y − HC‖²_F from the data for the
	// rows x of Cᵀ (in f's basis, which is then the identity).
	residual func(x []T) float64
	// The statistics residual's data and error bound: yy = ‖Y‖²_F;
	// delta bounds ‖ΔG‖₂, relErr·sNorm bounds ‖ΔS‖_F.
	yy, delta, relErr, sNorm float64
	// spectrum, when set, holds the eigenvalues of G, descending and
	// clamped at 0, and gives 1 − df/n.
	spectrum []float64
}

func newPrimalScorer[T float32 | float64](f shifted[T], s []T, n, m, nc int) *primalScorer[T] {
	return &primalScorer[T]{f: f, s: s, x: make([]T, len(s)), n: n, m: m, nc: nc}
}

// fromStatistics sets the statistics residual: ‖Y‖²_F = yy, and errors
// of G and S bounded by relErr·gNorm (2-norm) and relErr·sNorm
// (Frobenius norm).
func (p *primalScorer[T]) fromStatistics(yy, relErr, gNorm, sNorm float64) *primalScorer[T] {
	p.yy, p.delta, p.relErr, p.sNorm = yy, relErr*gNorm, relErr, sNorm
	return p
}

func (p *primalScorer[T]) terms(lambda float64) (rss, den float64, ok bool) {
	if !p.f.factor(lambda) {
		return 0, 0, false
	}
	copy(p.x, p.s)
	p.f.solve(p.x, p.nc)
	if p.residual != nil {
		rss = p.residual(p.x)
	} else {
		var fit, cc float64 // tr SᵀC + λ‖C‖², ‖C‖²
		for i, v := range p.x {
			x := float64(v)
			fit += float64(p.s[i])*x + lambda*x*x
			cc += x * x
		}
		rss = p.yy - fit
		// First-order error of the fitted part F = tr SᵀA⁻¹S + λ tr SᵀA⁻²S
		// (A = G + λI) under errors ΔG, ΔS: dF = −tr CᵀΔG C − 2λ tr CᵀΔG A⁻¹C
		// + 2 tr ΔSᵀC + 2λ tr ΔSᵀA⁻¹C, so |dF| ≤ 3‖ΔG‖₂‖C‖²_F + 4‖ΔS‖_F‖C‖_F
		// (‖A⁻¹‖ ≤ 1/λ); plus the rounding of the float64 sums.
		bound := 3*p.delta*cc + 4*p.relErr*p.sNorm*math.Sqrt(cc) + 8*float64(p.m)*u64*(p.yy+fit)
		if !(rss > bound) {
			return 0, 0, false // not determinable from these statistics
		}
	}
	if p.spectrum != nil {
		if p.n > p.m {
			den = float64(p.n - p.m)
		}
		for _, sv := range p.spectrum[:min(p.n, p.m)] {
			den += lambda / (sv + lambda)
		}
		return rss, den / float64(p.n), true
	}
	tr, ok := p.f.invTrace()
	return rss, (float64(p.n-p.m) + lambda*tr) / float64(p.n), ok
}

// sumSq returns Σ v² in float64.
func sumSq[T float32 | float64](s []T) float64 {
	var t float64
	for _, v := range s {
		t += float64(v) * float64(v)
	}
	return t
}

// upperSumSq returns Σ a[i][j]² over j >= i.
func upperSumSq[T float32 | float64](a []T, n int) float64 {
	var t float64
	for i := 0; i < n; i++ {
		t += sumSq(a[i*n+i : (i+1)*n])
	}
	return t
}
