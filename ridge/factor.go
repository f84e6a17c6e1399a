package ridge

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/flycl/flycl/linalg"
)

// Solve returns C (classes × m, row c = weights of class c) with
// (G + λI) Cᵀ = S, by a Cholesky factorisation of G + λI.
func (a *Accumulator) Solve(ctx context.Context, lambda float64) ([]float32, error) {
	if err := a.Factor(ctx, lambda); err != nil {
		return nil, err
	}
	c := append([]float32(nil), a.s...)
	linalg.Spotrs(a.m, a.nc, a.buf, a.m, c, a.m)
	return c, ctx.Err()
}

// Factor writes the Cholesky factor of G + λI into the workspace; SolveRows
// then applies it. Solve is Factor followed by SolveRows(S). On success
// FactorLambda returns lambda until G changes (other than through
// AddUpdating or SubDowndating, which keep the factor).
func (a *Accumulator) Factor(ctx context.Context, lambda float64) error {
	if !(lambda > 0) {
		return fmt.Errorf("ridge: lambda must be positive, got %g", lambda)
	}
	m := a.m
	a.InvalidateFactor()
	mirrorLower(a.buf, m)
	for i := 0; i < m; i++ {
		a.buf[i*m+i] = float32(float64(a.diag[i]) + lambda)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := linalg.Spotrf(m, a.buf, m); err != nil {
		return fmt.Errorf("ridge: factor G + %g I: %w", lambda, err)
	}
	a.fac = lambda
	return nil
}

// SolveRows overwrites each of the nrhs rows of b (nrhs×m) with the
// solution x of (G + λI) x = row, using the last Factor and the changes
// AddUpdating and SubDowndating kept since (lowrank.go). With such changes
// the solve is the Woodbury identity's followed by one step of iterative
// refinement (a residual with G, a second solve): the identity loses
// accuracy by cancellation for right-hand sides in directions the factor's
// A₀ knew only through λ (new classes at a small λ), and one step of
// refinement in the working precision makes a solver that is not too
// unstable backward stable again (Skeel, Math. Comp. 35, 1980).
func (a *Accumulator) SolveRows(b []float32, nrhs int) {
	if a.fac == 0 || a.lr.rows() == 0 {
		a.solve0(b, nrhs)
		return
	}
	rhs := slices.Clone(b)
	a.woodbury(b, nrhs)
	r := a.residualRows(rhs, b, nrhs)
	a.woodbury(r, nrhs)
	for i, v := range r {
		b[i] += v
	}
}

// woodbury overwrites the nrhs rows of b with A⁻¹·row by the factor and
// the low-rank term, without refinement.
func (a *Accumulator) woodbury(b []float32, nrhs int) {
	zx := a.lr.products(b, nrhs)
	a.solve0(b, nrhs)
	a.lr.correct(b, nrhs, zx)
}

// residualRows returns the rows of rhs − A·x (A = G + λI, λ = FactorLambda)
// in float32: one product with G's lower triangle (ssymm reads the
// workspace diagonal, which is the factor's; G's is put back after).
func (a *Accumulator) residualRows(rhs, x []float32, nrhs int) []float32 {
	m := a.m
	r := slices.Clone(rhs)
	linalg.SsymmLowerRight(nrhs, m, -1, a.buf, m, x, m, 1, r, m)
	for i := 0; i < m; i++ {
		d := float64(a.diag[i]) + a.fac - float64(a.buf[i*m+i])
		for k := 0; k < nrhs; k++ {
			r[k*m+i] = float32(float64(r[k*m+i]) - d*float64(x[k*m+i]))
		}
	}
	return r
}

// Rank-n updates of the Cholesky factor: see lowrank.go for how a learn at
// the factor's λ is applied without touching the factor.

// ErrDowndate is returned (wrapped) when removing samples from the factor
// would lose positive definiteness or accuracy; the factor is then
// invalid and the next Factor computes it afresh.
var ErrDowndate = errors.New("ridge: downdate of the factor would lose definiteness or accuracy")

// downdateMinC2 bounds a downdate. Removing a sample h with leverage
// a = hᵀA⁻¹h leaves A − hhᵀ positive definite when c² = 1 − a > 0; the
// hyperbolic rotation of a classical downdate (and the Cholesky pivot of
// I − HA⁻¹Hᵀ in the low-rank term, lowrank.go, which is the same c²)
// amplifies the relative rounding of what it produces by about
// (1+|t|)/(1−|t|) ≤ 4/c². Requiring c² ≥ 4√u (u = 2⁻²⁴, float32's unit
// roundoff) keeps that amplification below 1/√u, so at least half of
// float32's digits survive; a downdate that needs a smaller c² (the
// samples removed nearly span a direction that nothing else in G does:
// G − HᵀH + λI is close to singular at this λ) falls back to a fresh
// factorisation.
var downdateMinC2 = 4 * math.Sqrt(0x1p-24)

// updateCrossover: the low-rank term of the learns since the factorisation
// (lowrank.go) is kept while it holds at most m/updateCrossover samples.
// Its memory is r·m floats (m²/16 at the limit, a sixteenth of the
// statistics), and a learn of n samples costs 2·n·m² flops of triangular
// solves however large r is (plus r·n·m), so the limit sets how often a
// stream of small learns pays a refactorisation (m³/3): once every
// m/16 samples, about 2·m² flops per sample amortised, the cost of the
// solves themselves. A single learn of more samples than the limit
// refactors: at m = 10000 its solves (2·625·m² flops) already cost about
// half a refactorisation, measured with `flycl bench learn-update`.
const updateCrossover = 16

// UpdateLimit returns the largest number of samples learned (or
// forgotten) since the factorisation of an m×m G + λI that a learn at the
// same λ applies without refactoring.
func UpdateLimit(m int) int { return max(1, m/updateCrossover) }

// SetUpdateLimit sets the largest number of samples since the
// factorisation that AddUpdating and SubDowndating keep the factor for: 0
// never (always refactor), a negative value the default UpdateLimit(m).
// Benchmarks and tests use it to run both paths.
func (a *Accumulator) SetUpdateLimit(n int) { a.limit = n + 1 }

// updateLimit is the limit in force.
func (a *Accumulator) updateLimit() int {
	if a.limit <= 0 {
		return UpdateLimit(a.m)
	}
	return a.limit - 1
}

// FactorLambda returns the λ of the Cholesky factor the workspace holds,
// that of G + λI for the current G, or 0 when it holds none (nothing
// factored yet, or G changed since without an update of the factor).
func (a *Accumulator) FactorLambda() float64 { return a.fac }

// InvalidateFactor forgets the factor (the next solve refactors).
func (a *Accumulator) InvalidateFactor() { a.fac, a.updates = 0, 0; a.lr.reset() }

// FactorUpdate reports what AddUpdating or SubDowndating did to the factor.
type FactorUpdate struct {
	// Updated is true when the factor was kept (the change joined its
	// low-rank term) and passed the drift check; otherwise it is invalid
	// and the next Factor refactors.
	Updated bool
	// Reason says why not, when not ("" when updated).
	Reason string
	// Residual is the drift check's ρ (see DriftTolerance) when it ran
	// (the first update after a factorisation and every 8th after it),
	// and Tolerance the bound it was held to (0 both when it did not run).
	Residual, Tolerance float64
	// Duration is the time spent on the factor (update and drift check).
	Duration time.Duration
}

// AddUpdating is Add, keeping the factor: when the workspace holds the
// factor of G + λI (FactorLambda() == lambda > 0) and the samples since
// it was computed stay within UpdateLimit, the rank-n term hᵀh joins the
// factor's low-rank term (lowrank.go), is checked for drift
// (FactorResidual) and the factor stays valid; otherwise it is
// invalidated as Add does. After it, UpdateSolution and Leverages give
// the classifier's change and the samples' leverages without a solve.
func (a *Accumulator) AddUpdating(h []float32, n int, labels []int, lambda float64) (FactorUpdate, error) {
	if err := a.checkAdd(h, n, labels); err != nil {
		return FactorUpdate{}, err
	}
	if n == 0 {
		return FactorUpdate{Updated: a.fac > 0 && a.fac == lambda}, nil
	}
	why := a.updatable(n, lambda)
	if why != "" {
		a.fac = 0
		AddGram(a.buf, a.diag, h, n, a.m)
		a.addS(h, n, labels)
		return FactorUpdate{Reason: why}, nil
	}
	// AddGram uses the workspace's diagonal, which holds U's: keep it.
	ud := a.factorDiag()
	AddGram(a.buf, a.diag, h, n, a.m)
	a.setFactorDiag(ud)
	a.addS(h, n, labels)
	up := a.rankUpdate(h, n, 1)
	if up.Updated {
		a.lr.last.ok, a.lr.last.labels = true, slices.Clone(labels)
	}
	return up, nil
}

// SubDowndating is Sub, keeping the factor as AddUpdating does, by a
// rank-n term with the sign −1. A downdate that would lose positive definiteness or
// accuracy (see ErrDowndate) or fails the drift check leaves the factor
// invalid, so the next Factor refactors; the statistics are Sub's either
// way.
func (a *Accumulator) SubDowndating(h []float32, n int, labels []int, lambda float64) (FactorUpdate, error) {
	why := a.updatable(n, lambda)
	if why != "" {
		return FactorUpdate{Reason: why}, a.Sub(h, n, labels)
	}
	ud := a.factorDiag()
	fac := a.fac
	if err := a.Sub(h, n, labels); err != nil {
		a.setFactorDiag(ud)
		a.fac = fac
		return FactorUpdate{}, err
	}
	a.setFactorDiag(ud)
	a.fac = fac
	return a.rankUpdate(h, n, -1), nil
}

// updatable says why the factor cannot take a rank-n change at lambda ("" if
// it can).
func (a *Accumulator) updatable(n int, lambda float64) string {
	switch {
	case a.fac == 0:
		return "no factor"
	case a.fac != lambda:
		return fmt.Sprintf("λ changed from %g to %g", a.fac, lambda)
	case a.lr.rows()+n > a.updateLimit():
		return fmt.Sprintf("%d samples since the factorisation, more than the %d it is kept for", a.lr.rows()+n, a.updateLimit())
	}
	return ""
}

func (a *Accumulator) factorDiag() []float32 {
	d := make([]float32, a.m)
	for i := range d {
		d[i] = a.buf[i*a.m+i]
	}
	return d
}

func (a *Accumulator) setFactorDiag(d []float32) {
	for i, v := range d {
		a.buf[i*a.m+i] = v
	}
}

// rankUpdate adds sign·hᵀh to the factor's low-rank term and runs the
// drift check, invalidating the factor when either fails.
func (a *Accumulator) rankUpdate(h []float32, n int, sign float64) (up FactorUpdate) {
	t := time.Now()
	defer func() { up.Duration = time.Since(t) }()
	a.lr.m = a.m
	if err := a.lr.add(h, n, sign, a.solve0); err != nil {
		a.fac = 0
		return FactorUpdate{Reason: err.Error()}
	}
	a.updates++
	rho := a.blockResidual(uint64(a.updates))
	if a.checkDue() {
		rho = max(rho, a.FactorResidual(driftProbes, uint64(a.updates)))
	}
	tol := DriftTolerance(a.m)
	if !(rho <= tol) {
		a.fac = 0
		return FactorUpdate{Reason: fmt.Sprintf("drift check: residual %.3g above %.3g", rho, tol), Residual: rho, Tolerance: tol}
	}
	return FactorUpdate{Updated: true, Residual: rho, Tolerance: tol}
}

// checkDue says whether the drift check runs on the update just counted.
func (a *Accumulator) checkDue() bool { return driftEvery <= 1 || a.updates%driftEvery == 1 }

// solve0 overwrites the nrhs rows of b with A₀⁻¹·row, A₀ the matrix the
// factor was computed for.
func (a *Accumulator) solve0(b []float32, nrhs int) {
	linalg.Spotrs(a.m, nrhs, a.buf, a.m, b, a.m)
}

// UpdateSolution replaces c, the classifier solved for the statistics
// before the last AddUpdating (classes×m rows, in S's order; rows of the
// classes that learn added are zero), by the classifier for the
// statistics now, at FactorLambda, without a solve with the factor:
// O(r·m·classes) flops (see lowRank.solutionDelta). It returns false and
// leaves c alone when it cannot: the last change of the statistics was
// not an AddUpdating that kept the factor, or it was one whose drift
// check ran (then a full solve, SolveRows on S, bounds the rounding the
// incremental classifier gathers over driftEvery learns).
func (a *Accumulator) UpdateSolution(c []float32) bool {
	if a.fac == 0 || !a.lr.last.ok || a.checkDue() || len(c) != a.nc*a.m {
		return false
	}
	d := a.lr.solutionDelta(c, a.nc)
	for i, v := range d {
		c[i] += v
	}
	return true
}

// Leverages returns hᵢᵀ(G + λI)⁻¹hᵢ for the samples of the last
// AddUpdating, in order, when it kept the factor and nothing changed the
// statistics since (nil otherwise): from the low-rank term, without a
// solve (see lowrank.go).
func (a *Accumulator) Leverages() []float64 {
	if a.fac == 0 || !a.lr.last.ok {
		return nil
	}
	return a.lr.leverages()
}

// driftProbes is the number of random vectors of the drift check.
const driftProbes = 2

// driftEvery: the drift check runs on the first update after a
// factorisation and then on every driftEvery-th (it reads G once and the
// factor twice, about a learn's time). The updates in between are not
// checked; the low-rank term's rounding grows with them by at most about
// γ̃ of the products forming its new rows (length m, the same order as
// the solve's own), so a term kept is never worse than about twice τ
// and is refactored at the next check.
const driftEvery = 8

// DriftTolerance returns the bound the drift check holds the solves of an
// m×m G + λI to (see FactorResidual for ρ).
//
// Derivation. With A = G + λI and d_i = √A_ii, a solve Ay = z with a
// Cholesky factor computed in float32 is exact for a matrix A + ΔA with
// |ΔA| ≤ γ_{3m+1}·|Uᵀ||U| (Higham, Accuracy and Stability of Numerical
// Algorithms, Thm 10.4), and |Uᵀ||U| ≤ d·dᵀ entrywise (Cauchy–Schwarz on
// U's columns, whose norms are the d_i), so ‖z − Ay‖₂ ≤ γ_{3m+1}·‖d‖₂·dᵀ|y|.
// Evaluating the residual in float32 (the product Ay, sums of at most m
// terms bounded by d_i·d_j·|y_j|, and the subtraction) adds at most
// (γ_m + 2u)·‖d‖₂·dᵀ|y|. γ_m = m·u/(1−m·u) is the worst case; rounding
// errors that behave as independent random variables give, with
// probability at least 1 − 2·exp(−λ²/2) per sum, γ̃_m = λ·√m·u (Higham and
// Mary, SIAM J. Sci. Comput. 41(5), 2019). With λ = 8 (failure probability
// 2.5·10⁻¹⁴) a fresh factor's solve has ρ ≤ 8·(√(3m+1) + √m)·u + 2u,
// below τ = 4·8·√(m+1)·u (√3 + 1 < 4), about 1.9·10⁻⁴ at m = 10000. A
// factor and low-rank term whose solves have drifted past what a fresh
// factorisation can show are refactored. The classifier's relative
// difference from the exact one is then at most about κ(A)·τ·tr(A)/‖A‖₂
// (a backward error ‖ΔA‖₂ ≤ ρ·‖d‖₂² = ρ·tr(A) in the first-order
// perturbation bound of a linear solve), the same order as a fresh
// float32 factorisation's.
func DriftTolerance(m int) float64 {
	return 4 * 8 * math.Sqrt(float64(m+1)) * 0x1p-24
}

// FactorResidual returns the drift check's ρ for the solves with the
// workspace's factor and low-rank term of A = G + λI (λ = FactorLambda,
// which must be > 0): the largest over probes random vectors z (seeded
// with seed) of
//
//	ρ(z) = ‖z − Ay‖₂ / (‖d‖₂ · dᵀ|y|),  y = A⁻¹z,  d_i = √A_ii,
//
// computed in float32, y by the factor and the low-rank term without
// SolveRows's refinement (a solve and a product with G for all probes
// together: reads G's triangle once and the factor twice).
func (a *Accumulator) FactorResidual(probes int, seed uint64) float64 {
	m, lambda := a.m, a.fac
	if !(lambda > 0) {
		return math.Inf(1)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	z := make([]float32, probes*m)
	for i := range z {
		z[i] = float32(rng.NormFloat64())
	}
	y := slices.Clone(z)
	if a.lr.rows() == 0 {
		a.solve0(y, probes)
	} else {
		a.woodbury(y, probes)
	}
	return a.residual(z, y, probes)
}

// blockResidual is the drift check in the directions of the last block's
// samples H, where a low-rank term loses accuracy first (A₀⁻¹ may amplify
// them by up to 1/λ before the term takes that back: cancellation): ρ
// (see FactorResidual) of y = A⁻¹z for two random combinations z = Hᵀg,
// with y from the term itself (lowRank.throughBlock), no solve with the
// factor; one product with G.
func (a *Accumulator) blockResidual(seed uint64) float64 {
	w := &a.lr
	m, n := a.m, w.rows()-w.last.lo
	const probes = 2
	rng := rand.New(rand.NewPCG(seed, 0xb10c))
	g := make([]float64, n*probes) // n×probes
	g32 := make([]float32, probes*n)
	for i := 0; i < n; i++ {
		for j := 0; j < probes; j++ {
			v := rng.NormFloat64()
			g32[j*n+i] = float32(v)
			g[i*probes+j] = float64(float32(v)) * w.sign[w.last.lo+i]
		}
	}
	z := make([]float32, probes*m)
	linalg.Sgemm(false, false, probes, m, n, 1, g32, n, w.last.h, m, 0, z, m)
	y := w.throughBlock(g, probes)
	return a.residual(z, y, probes)
}

// residual returns the largest over the probes rows of ρ = ‖z − Ay‖₂ /
// (‖d‖₂·dᵀ|y|), in float32 products (see FactorResidual).
func (a *Accumulator) residual(z, y []float32, probes int) float64 {
	m, lambda := a.m, a.fac
	// v = y·A: ssymm reads G's lower triangle and the workspace diagonal,
	// which is U's; the diagonal's contribution is put right afterwards.
	v := make([]float32, probes*m)
	linalg.SsymmLowerRight(probes, m, 1, a.buf, m, y, m, 0, v, m)
	dd := make([]float64, m)
	var dn float64
	for i := range dd {
		dd[i] = float64(a.diag[i]) + lambda
		dn += dd[i]
	}
	var worst float64
	for r := 0; r < probes; r++ {
		var rr, dy float64
		for i := 0; i < m; i++ {
			yi := float64(y[r*m+i])
			av := float64(v[r*m+i]) + (dd[i]-float64(a.buf[i*m+i]))*yi
			e := float64(z[r*m+i]) - av
			rr += e * e
			dy += math.Sqrt(dd[i]) * math.Abs(yi)
		}
		rho := math.Sqrt(rr) / (math.Sqrt(dn) * dy)
		if !(rho <= worst) {
			worst = rho
		}
	}
	return worst
}
