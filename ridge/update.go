package ridge

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/flycl/flycl/internal/parallel"
	"github.com/flycl/flycl/linalg"
)

// Rank-n updates of the Cholesky factor.
//
// Adding n samples H (n×m) changes G + λI by the rank-n term HᵀH, so the
// factor U of the old G + λI (UᵀU = G + λI, U upper triangular) need not be
// computed again: U' with U'ᵀU' = UᵀU + HᵀH is the triangle of a QR
// factorisation of the stacked [U; H], which n Givens rotations per row of U
// reach (the LINPACK rank-1 update, schud, applied for each of the n rows of
// H in turn). Removing samples (an exact forget) is the same with hyperbolic
// rotations, in the "mixed" form, which is the stable one (Alexander, Pan
// and Plemmons 1988; Bojanczyk, Brent, Van Dooren and de Hoog 1987).
//
// The rotations are applied panel by panel, in the way LAPACK blocks its
// factorisations: for a panel of nb rows of U, the rotations are computed on
// the panel's nb×nb diagonal block and the matching nb columns of H (a small
// float64 computation) and accumulated into one (nb+n)×(nb+n) matrix M; the
// rest of the panel's rows and of H, the columns to the right of the block,
// is then multiplied by M in one matrix product (BLAS-3 sgemm, threaded by
// OpenBLAS). The products cost about 2·(nb+n)²/nb·m²/2 flops in all, twice
// the 2·n·m² of rotations applied one by one when nb = n, but at the speed
// of a matrix product and reading U once: one by one, a row-by-row
// sequence of BLAS-1 rotations reads U's m²/2 floats n times, memory-bound.
// (LAPACK's stplqt, a blocked Householder LQ of [L, Hᵀ], gives the same
// triangle for the update, but has no downdating counterpart, flips the
// sign of the diagonal, and gonum, the build without OpenBLAS, lacks it.)

// ErrDowndate is returned (wrapped) when removing samples from the factor
// would lose positive definiteness or accuracy; the factor is then
// invalid and the next Factor computes it afresh.
var ErrDowndate = errors.New("ridge: downdate of the factor would lose definiteness or accuracy")

// downdateMinC2 bounds the hyperbolic rotations of a downdate. A rotation
// with t = x_k/U_kk has c² = 1 − t²; it amplifies the relative rounding of
// the row it produces by about (1+|t|)/(1−|t|) ≤ 4/c². Requiring c² ≥ 4√u
// (u = 2⁻²⁴, float32's unit roundoff) keeps that amplification below 1/√u,
// so at least half of float32's digits survive the rotation; a downdate
// that needs a sharper rotation (the samples removed nearly span a
// direction that nothing else in G does: G − HᵀH + λI is close to
// singular at this λ) falls back to a fresh factorisation.
var downdateMinC2 = 4 * math.Sqrt(0x1p-24)

// updateCrossover: a rank-n update of an m×m factor costs about
// 2·(nb+n)²/nb·m²/2 flops of matrix products (≈ 4·n·m² with nb = n ≤ 64)
// plus m·n·(2nb+n) of rotations in Go, a refactorisation m³/3 flops of a
// faster kernel (spotrf). Measured with `flycl bench learn-update
// --update-limit 100000` on two cores (2026-11-26), the update takes, of
// the refactorisation's time, 0.35 at m = 2000, n = 20; 1.1 at n = 80; 2.0
// at n = 160; and at m = 10000, 0.06 at n = 20, 0.56 at n = 200, 1.6 at
// n = 400: the crossover is near m/30. Beyond UpdateLimit(m) = m/32
// samples a learn refactors.
const updateCrossover = 32

// UpdateLimit returns the largest number of samples whose rank-n update of
// an m×m factor is cheaper than a fresh factorisation.
func UpdateLimit(m int) int { return max(1, m/updateCrossover) }

// SetUpdateLimit sets the largest n AddUpdating and SubDowndating update
// the factor for: 0 never (always refactor), a negative value the default
// UpdateLimit(m). Benchmarks and tests use it to run both paths.
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
func (a *Accumulator) InvalidateFactor() { a.fac, a.updates = 0, 0 }

// FactorUpdate reports what AddUpdating or SubDowndating did to the factor.
type FactorUpdate struct {
	// Updated is true when the factor was updated in place and passed the
	// drift check; otherwise it is invalid and the next Factor refactors.
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
// factor of G + λI (FactorLambda() == lambda > 0) and n <= UpdateLimit,
// the factor is updated by the rank-n term hᵀh, checked for drift
// (CheckFactor) and stays valid; otherwise it is invalidated as Add does.
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
	return a.rankUpdate(h, n, 1), nil
}

// SubDowndating is Sub, keeping the factor as AddUpdating does, by a
// rank-n downdate. A downdate that would lose positive definiteness or
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
	case n > a.updateLimit():
		return fmt.Sprintf("%d samples, more than the %d an update beats a refactorisation at", n, a.updateLimit())
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

// rankUpdate applies sign·hᵀh to the factor and runs the drift check,
// invalidating the factor when either fails.
func (a *Accumulator) rankUpdate(h []float32, n int, sign float64) (up FactorUpdate) {
	t := time.Now()
	defer func() { up.Duration = time.Since(t) }()
	x := append([]float32(nil), h...)
	if err := cholRankUpdate(a.buf, a.m, x, n, sign); err != nil {
		a.fac = 0
		return FactorUpdate{Reason: err.Error()}
	}
	a.updates++
	if a.updates%driftEvery != 1 && driftEvery > 1 {
		return FactorUpdate{Updated: true}
	}
	rho := a.FactorResidual(driftProbes, uint64(a.updates))
	tol := DriftTolerance(a.m)
	if !(rho <= tol) {
		a.fac = 0
		return FactorUpdate{Reason: fmt.Sprintf("drift check: residual %.3g above %.3g", rho, tol), Residual: rho, Tolerance: tol}
	}
	return FactorUpdate{Updated: true, Residual: rho, Tolerance: tol}
}

// cholRankUpdate overwrites the upper triangle of the m×m row-major u,
// the factor U of A = UᵀU, with that of A + sign·xᵀx for the n×m
// row-major x (sign is +1 or -1), blocked as described above. x is
// destroyed. The strict lower triangle of u is neither read nor written.
// With sign -1 it returns ErrDowndate when a rotation would be too sharp
// (see downdateMinC2); u is then partly updated and must be refactored.
func cholRankUpdate(u []float32, m int, x []float32, n int, sign float64) error {
	if n == 0 {
		return nil
	}
	nb := min(m, max(16, min(n, 64)))
	w := nb + n
	blk := make([]float64, w*nb) // the panel's diagonal block (rows of U, then of x)
	mat := make([]float64, w*w)  // the panel's rotations, accumulated
	m32 := make([]float32, w*w)
	t := make([]float32, w*max(0, m-nb)) // the panel's trailing columns, copied
	for k0 := 0; k0 < m; k0 += nb {
		k1 := min(m, k0+nb)
		b := k1 - k0
		wb := b + n
		for i := 0; i < b; i++ {
			row := blk[i*nb : i*nb+b]
			clear(row[:i])
			for j := i; j < b; j++ {
				row[j] = float64(u[(k0+i)*m+k0+j])
			}
		}
		for p := 0; p < n; p++ {
			row := blk[(b+p)*nb : (b+p)*nb+b]
			for j := range row {
				row[j] = float64(x[p*m+k0+j])
			}
		}
		mt := mat[:wb*wb]
		clear(mt)
		for i := 0; i < wb; i++ {
			mt[i*wb+i] = 1
		}
		for i := 0; i < b; i++ {
			urow := blk[i*nb : i*nb+b]
			mi := mt[i*wb : (i+1)*wb]
			for p := 0; p < n; p++ {
				xrow := blk[(b+p)*nb : (b+p)*nb+b]
				xv := xrow[i]
				if xv == 0 {
					continue
				}
				d := urow[i]
				tt := xv / d
				c2 := 1 + sign*tt*tt
				if sign < 0 && !(c2 >= downdateMinC2) {
					return fmt.Errorf("%w (row %d: rotation with c² = %.3g, below %.3g)", ErrDowndate, k0+i, c2, downdateMinC2)
				}
				c := math.Sqrt(c2)
				st := sign * tt
				urow[i], xrow[i] = d*c, 0
				for j := i + 1; j < b; j++ {
					v := (urow[j] + st*xrow[j]) / c
					urow[j] = v
					xrow[j] = c*xrow[j] - tt*v
				}
				mp := mt[(b+p)*wb : (b+p+1)*wb]
				for j := range mi {
					v := (mi[j] + st*mp[j]) / c
					mi[j] = v
					mp[j] = c*mp[j] - tt*v
				}
			}
		}
		for i := 0; i < b; i++ {
			if !(blk[i*nb+i] > 0) || math.IsInf(blk[i*nb+i], 0) {
				return fmt.Errorf("%w (row %d: diagonal %g)", ErrDowndate, k0+i, blk[i*nb+i])
			}
			for j := i; j < b; j++ {
				u[(k0+i)*m+k0+j] = float32(blk[i*nb+j])
			}
		}
		for p := 0; p < n; p++ {
			clear(x[p*m+k0 : p*m+k1])
		}
		tw := m - k1
		if tw == 0 {
			continue
		}
		tt := t[:wb*tw]
		parallel.For(wb, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				if r < b {
					copy(tt[r*tw:(r+1)*tw], u[(k0+r)*m+k1:(k0+r)*m+m])
				} else {
					p := r - b
					copy(tt[r*tw:(r+1)*tw], x[p*m+k1:p*m+m])
				}
			}
		})
		mm := m32[:wb*wb]
		for i, v := range mt {
			mm[i] = float32(v)
		}
		linalg.Sgemm(false, false, b, tw, wb, 1, mm, wb, tt, tw, 0, u[k0*m+k1:], m)
		linalg.Sgemm(false, false, n, tw, wb, 1, mm[b*wb:], wb, tt, tw, 0, x[k1:], m)
	}
	return nil
}

// driftProbes is the number of random vectors of the drift check.
const driftProbes = 2

// driftEvery: the drift check runs on the first update after a
// factorisation and then on every driftEvery-th (it reads G once and U
// twice, about a third of an update's time). One update adds a backward
// error of at most about γ̃_{nb+n} = 8·√(nb+n)·u in ρ's units (each entry
// of [U; H] goes through one float32 product of length nb+n per panel,
// with the rotations' own rounding below that), so the driftEvery−1
// unchecked updates let ρ exceed τ by at most 7·γ̃_{nb+n}: with n = 20,
// 350u, a tenth of τ at m = 10000 (see DriftTolerance). A factor kept is
// thus never worse than about 1.1τ, and is refactored at the next check.
const driftEvery = 8

// DriftTolerance returns the bound the drift check holds the factor of an
// m×m G + λI to (see FactorResidual for ρ).
//
// Derivation. With A = G + λI and d_i = √A_ii, a Cholesky factor computed
// in float32 satisfies UᵀU = A + E with |E_ij| ≤ γ_{m+1}·(|Uᵀ||U|)_ij ≤
// γ_{m+1}·d_i·d_j (Higham, Accuracy and Stability of Numerical Algorithms,
// Thm 10.3, and Cauchy–Schwarz on U's columns, whose norms are the d_i);
// so ‖Ez‖₂ ≤ γ_{m+1}·‖d‖₂·dᵀ|z|. Evaluating the residual in float32 (the
// product Az and the two triangular products, each a sum of at most m
// terms bounded by d_i·d_j·|z_j|) adds at most 3γ_m·‖d‖₂·dᵀ|z|. Hence a
// fresh factor has ρ ≤ 4γ_{m+1}. γ_m = m·u/(1−m·u) is the worst case;
// rounding errors that behave as independent random variables give, with
// probability at least 1 − 2·exp(−λ²/2) per sum, γ̃_m = λ·√m·u (Higham and
// Mary, SIAM J. Sci. Comput. 41(5), 2019). We use that probabilistic bound
// with λ = 8 (failure probability 2.5·10⁻¹⁴): τ = 4·8·√(m+1)·u, about
// 1.9·10⁻⁴ at m = 10000. A factor whose rounding has grown past what a
// fresh factorisation can show is refactored. The classifier's relative
// difference from the exact one is then at most about κ(A)·τ·‖d‖²/‖A‖₂
// (a backward error bounded by τ·‖d‖²: the first-order perturbation
// bound of a linear solve), the same order as a fresh float32
// factorisation's.
func DriftTolerance(m int) float64 {
	return 4 * 8 * math.Sqrt(float64(m+1)) * 0x1p-24
}

// FactorResidual returns the drift check's ρ for the workspace's factor U of
// A = G + λI (λ = FactorLambda, which must be > 0): the largest over probes
// random vectors z (seeded with seed) of
//
//	ρ(z) = ‖Az − UᵀUz‖₂ / (‖d‖₂ · dᵀ|z|),  d_i = √A_ii,
//
// computed in float32 with three matrix products (O(m²) each, reading G's
// triangle once and U's twice for all probes together).
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
	// y = z·A: ssymm reads G's lower triangle and the workspace diagonal,
	// which is U's; the diagonal's contribution is put right afterwards.
	y := make([]float32, probes*m)
	linalg.SsymmLowerRight(probes, m, 1, a.buf, m, z, m, 0, y, m)
	dd := make([]float64, m)
	var dn float64
	for i := range dd {
		dd[i] = float64(a.diag[i]) + lambda
		dn += dd[i]
	}
	for r := 0; r < probes; r++ {
		zr, yr := z[r*m:(r+1)*m], y[r*m:(r+1)*m]
		for i := range yr {
			yr[i] = float32(float64(yr[i]) + (dd[i]-float64(a.buf[i*m+i]))*float64(zr[i]))
		}
	}
	// v = z·Uᵀ·U, the rows of (UᵀU zᵀ)ᵀ.
	v := append([]float32(nil), z...)
	linalg.StrmmUpperRight(true, probes, m, 1, a.buf, m, v, m)
	linalg.StrmmUpperRight(false, probes, m, 1, a.buf, m, v, m)
	var worst float64
	for r := 0; r < probes; r++ {
		var rr, dz float64
		for i := 0; i < m; i++ {
			e := float64(y[r*m+i]) - float64(v[r*m+i])
			rr += e * e
			dz += math.Sqrt(dd[i]) * math.Abs(float64(z[r*m+i]))
		}
		rho := math.Sqrt(rr) / (math.Sqrt(dn) * dz)
		if !(rho <= worst) {
			worst = rho
		}
	}
	return worst
}
