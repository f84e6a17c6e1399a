package ridge

import (
	"fmt"
	"math"
	"slices"

	"github.com/flycl/flycl/linalg"
)

// Learning at the factor's λ without touching the factor.
//
// A learn of n samples changes A = G + λI by the rank-n term HᵀH (a forget
// by −HᵀH). Rather than updating the m×m Cholesky factor U of A₀, the
// matrix it was computed for, the workspace keeps the change since then as
// a low-rank term,
//
//	A = A₀ + UᵣᵀΣUᵣ,
//
// with Uᵣ the r samples added (Σᵢᵢ = +1) or removed (Σᵢᵢ = −1) since the
// factorisation, and applies A⁻¹ by the Sherman–Morrison–Woodbury identity
//
//	A⁻¹ = A₀⁻¹ − Zᵀ K⁻¹ Z,  Z = Uᵣ A₀⁻¹ (r×m),  K = Σ + Uᵣ A₀⁻¹ Uᵣᵀ (r×r).
//
// A learn then costs two triangular solves with the factor for its n
// samples (Z's new rows: 2·n·m² flops of BLAS-3 strsm that read the
// factor twice and never write it) and the new rows and columns of K
// (r·n·m), against 4·n·m² or more for an in-place rank-n update that reads
// and writes the whole factor (blocked Givens rotations: measured 2.3×
// slower at m = 10000, n = 20). K is kept as K = LΣLᵀ, L lower triangular
// in float64: adding a block of rows extends L by its Schur complement
//
//	K₂₂ − K₂₁K₁₁⁻¹K₁₂ = Σ₂ + H A⁻¹ Hᵀ,
//
// the n×n matrix of the new samples against the A just before them, which
// is positive definite for an added block and, for a removed block,
// −(I − H A⁻¹ Hᵀ): I − H A⁻¹ Hᵀ is positive definite exactly when removing
// the samples leaves A positive definite, and its Cholesky pivots are the
// c² = 1 − leverage of the hyperbolic rotations of a classical downdate,
// so the same guard (downdateMinC2) refuses a downdate that would lose
// definiteness or accuracy. The same block gives, for free, the leverages
// hᵢᵀA⁻¹hᵢ = 1 − ((Σ₂ + HA⁻¹Hᵀ)⁻¹)ᵢᵢ of an added block's samples (the
// leave-one-out calibration needs them) and the change of the classifier
// (UpdateSolution).
//
// Z and L grow with r; once r would pass UpdateLimit(m) the learn
// refactors (and starts over with r = 0).

// lowRank is the change of A since its factor was computed (see above).
type lowRank struct {
	m    int
	z    []float32   // r×m, row i = A₀⁻¹uᵢ
	l    [][]float64 // K = LΣLᵀ: row i of L, i+1 values
	sign []float64   // Σ, one per row

	// The last block (for the drift check, UpdateSolution and
	// Leverages): rows [lo, r) of z and l, its samples, and for an added
	// block its class indices, with ok true while nothing else changed
	// the statistics since.
	last struct {
		ok     bool
		lo     int
		h      []float32
		labels []int
	}
}

// rows returns r.
func (w *lowRank) rows() int { return len(w.sign) }

// reset empties the term (a fresh factorisation).
func (w *lowRank) reset() {
	w.z, w.l, w.sign = w.z[:0], nil, nil
	w.last.ok, w.last.h, w.last.labels = false, nil, nil
}

// add appends the n×m samples h with sign s (+1 added, −1 removed) to the
// term; solve0 applies A₀⁻¹ to rows in place (the factor's two triangular
// solves). On error the term is unchanged.
func (w *lowRank) add(h []float32, n int, s float64, solve0 func(b []float32, nrhs int)) error {
	m, r := w.m, w.rows()
	zn := append([]float32(nil), h...)
	solve0(zn, n)
	// K₁₂ = Z_old Hᵀ (r×n), K₂₂ − Σ₂ = H Z_newᵀ (n×n), in float32 products
	// of length m as every other solve of the workspace.
	k12 := make([]float32, r*n)
	if r > 0 {
		linalg.Sgemm(false, true, r, n, m, 1, w.z, m, h, m, 0, k12, n)
	}
	k22 := make([]float32, n*n)
	linalg.Sgemm(false, true, n, n, m, 1, h, m, zn, m, 0, k22, n)
	// W = L₁₁⁻¹K₁₂ (r×n); L₂₁ = (Σ₁W)ᵀ; the Schur complement
	// P = s·(K₂₂ − WᵀΣ₁W) must be positive definite: P = L₂₂L₂₂ᵀ.
	wk := make([]float64, r*n)
	for i := range wk {
		wk[i] = float64(k12[i])
	}
	for j := 0; j < n; j++ {
		for i := 0; i < r; i++ { // forward substitution, column j
			li := w.l[i]
			v := wk[i*n+j]
			for k := 0; k < i; k++ {
				v -= li[k] * wk[k*n+j]
			}
			wk[i*n+j] = v / li[i]
		}
	}
	p := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			v := 0.5 * (float64(k22[i*n+j]) + float64(k22[j*n+i]))
			if i == j {
				v += s
			}
			for k := 0; k < r; k++ {
				v -= wk[k*n+i] * w.sign[k] * wk[k*n+j]
			}
			p[i*n+j], p[j*n+i] = s*v, s*v
		}
	}
	// Cholesky of P, guarded: an added block has P = I + HA⁻¹Hᵀ with
	// pivots at least 1; a removed one I − HA⁻¹Hᵀ, pivots c² (see above).
	minPivot := 0.5
	if s < 0 {
		minPivot = downdateMinC2
	}
	rows := make([][]float64, n)
	for i := 0; i < n; i++ {
		row := make([]float64, r+i+1)
		for k := 0; k < r; k++ {
			row[k] = w.sign[k] * wk[k*n+i]
		}
		rows[i] = row
	}
	for i := 0; i < n; i++ {
		ri := rows[i][r:]
		for j := 0; j <= i; j++ {
			rj := rows[j][r:]
			v := p[i*n+j]
			for k := 0; k < j; k++ {
				v -= ri[k] * rj[k]
			}
			if i == j {
				if !(v >= minPivot) || math.IsInf(v, 0) {
					if s < 0 {
						return fmt.Errorf("%w (sample %d of the block: pivot c² = %.3g, below %.3g)", ErrDowndate, i, v, minPivot)
					}
					return fmt.Errorf("ridge: update of the factor: pivot %.3g of I + HA⁻¹Hᵀ below %.3g (the factor does not fit the statistics)", v, minPivot)
				}
				ri[i] = math.Sqrt(v)
			} else {
				ri[j] = v / rj[j]
			}
		}
	}
	// Σ for the new rows is s; L's new row i is [L₂₁ row i, L₂₂ row i]. A
	// row of L₂₁ is (Σ₁ W)ᵀ and L₂₂ is P's factor, with K's block
	// K₂₂ = L₂₁Σ₁L₂₁ᵀ + L₂₂ (sI) L₂₂ᵀ.
	w.z = append(w.z, zn...)
	w.l = append(w.l, rows...)
	for range n {
		w.sign = append(w.sign, s)
	}
	w.last.ok, w.last.lo, w.last.h, w.last.labels = false, r, slices.Clone(h), nil
	return nil
}

// kSolve overwrites the r×nrhs row-major b with K⁻¹b = L⁻ᵀΣL⁻¹b.
func (w *lowRank) kSolve(b []float64, nrhs int) {
	w.forward(b, nrhs, 0)
	w.backward(b, nrhs, w.rows())
}

// forward overwrites rows lo..r of b (r×nrhs) with ΣL⁻¹b, given that its
// rows before lo are zero (so L's columns before lo do not enter).
func (w *lowRank) forward(b []float64, nrhs, lo int) {
	r := w.rows()
	for i := lo; i < r; i++ {
		li := w.l[i]
		bi := b[i*nrhs : (i+1)*nrhs]
		for k := lo; k < i; k++ {
			if lk := li[k]; lk != 0 {
				bk := b[k*nrhs : (k+1)*nrhs]
				for j := range bi {
					bi[j] -= lk * bk[j]
				}
			}
		}
		d := 1 / li[i]
		for j := range bi {
			bi[j] *= d
		}
	}
	for i := lo; i < r; i++ {
		if w.sign[i] < 0 {
			for j := range b[i*nrhs : (i+1)*nrhs] {
				b[i*nrhs+j] = -b[i*nrhs+j]
			}
		}
	}
}

// backward overwrites the first r rows of b (r×nrhs) with L⁻ᵀb.
func (w *lowRank) backward(b []float64, nrhs, r int) {
	for k := r - 1; k >= 0; k-- {
		lk := w.l[k]
		bk := b[k*nrhs : (k+1)*nrhs]
		d := 1 / lk[k]
		for j := range bk {
			bk[j] *= d
		}
		for i := 0; i < k; i++ {
			if v := lk[i]; v != 0 {
				bi := b[i*nrhs : (i+1)*nrhs]
				for j := range bi {
					bi[j] -= v * bk[j]
				}
			}
		}
	}
}

// correct turns the rows of b, A₀⁻¹x for the nrhs rows x whose products
// with Z's rows are zx (nrhs×r, Z x), into A⁻¹x = A₀⁻¹x − Zᵀ K⁻¹ Z x.
func (w *lowRank) correct(b []float32, nrhs int, zx []float32) {
	m, r := w.m, w.rows()
	if r == 0 {
		return
	}
	q := make([]float64, r*nrhs) // r×nrhs: column j = Z x_j
	for j := 0; j < nrhs; j++ {
		for i := 0; i < r; i++ {
			q[i*nrhs+j] = float64(zx[j*r+i])
		}
	}
	w.kSolve(q, nrhs)
	q32 := make([]float32, nrhs*r)
	for j := 0; j < nrhs; j++ {
		for i := 0; i < r; i++ {
			q32[j*r+i] = float32(q[i*nrhs+j])
		}
	}
	linalg.Sgemm(false, false, nrhs, m, r, -1, q32, r, w.z, m, 1, b, m)
}

// products returns Z x for the nrhs rows x of b (nrhs×r).
func (w *lowRank) products(b []float32, nrhs int) []float32 {
	r := w.rows()
	zx := make([]float32, nrhs*r)
	if r > 0 {
		linalg.Sgemm(false, true, nrhs, r, w.m, 1, b, w.m, w.z, w.m, 0, zx, r)
	}
	return zx
}

// leverages returns hᵢᵀA⁻¹hᵢ for the samples of the last block (added):
// 1 − (P⁻¹)ᵢᵢ with P = L₂₂L₂₂ᵀ its Schur complement.
func (w *lowRank) leverages() []float64 {
	lo, r := w.last.lo, w.rows()
	n := r - lo
	out := make([]float64, n)
	e := make([]float64, n)
	for i := 0; i < n; i++ { // ‖L₂₂⁻¹eᵢ‖²
		clear(e)
		e[i] = 1
		var s float64
		for k := i; k < n; k++ {
			lk := w.l[lo+k][lo:]
			v := e[k]
			for t := i; t < k; t++ {
				v -= lk[t] * e[t]
			}
			v /= lk[k]
			e[k] = v
			s += v * v
		}
		out[i] = 1 - s
	}
	return out
}

// solutionDelta returns the change of the classifier (nc×m rows) caused
// by the last block, an added one with one-hot targets labels, given the
// classifier c before it (nc×m rows, the solution for the A and S before
// the block). With C as m×nc columns, A'C' = S + HᵀY and A' = A + HᵀH give
// A'(C' − C) = Hᵀ(Y − HC), and A'⁻¹Hᵀ = ZᵀK⁻¹[:, block] (Woodbury), so
// ΔC = Zᵀ·K⁻¹[:, block]·(Y − HC): O(r·m·nc) flops, no solve with the
// factor.
func (w *lowRank) solutionDelta(c []float32, nc int) []float32 {
	m, lo, r := w.m, w.last.lo, w.rows()
	h, labels := w.last.h, w.last.labels
	n := r - lo
	hc := make([]float32, n*nc) // H Cᵀ
	linalg.Sgemm(false, true, n, nc, m, 1, h, m, c, m, 0, hc, nc)
	t := make([]float64, n*nc)
	for i := 0; i < n; i++ {
		for j := 0; j < nc; j++ {
			v := -float64(hc[i*nc+j])
			if labels[i] == j {
				v++
			}
			t[i*nc+j] = v
		}
	}
	return w.throughBlock(t, nc)
}

// throughBlock returns the p×m rows of (ZᵀK⁻¹[:, block]·t)ᵀ for the
// n×p t (n the last block's size): A⁻¹Hᵀ·Σ₂t, H the block's samples.
// K⁻¹E = L⁻ᵀΣL⁻¹E with L⁻¹E = [0; L₂₂⁻¹]: forward through L₂₂ only, Σ,
// then backward through all of L; O(r²·p + r·m·p) flops.
func (w *lowRank) throughBlock(t []float64, p int) []float32 {
	m, lo, r := w.m, w.last.lo, w.rows()
	q := make([]float64, r*p)
	copy(q[lo*p:], t[:(r-lo)*p])
	w.forward(q, p, lo)
	w.backward(q, p, r)
	q32 := make([]float32, p*r) // Qᵀ
	for i := 0; i < r; i++ {
		for j := 0; j < p; j++ {
			q32[j*r+i] = float32(q[i*p+j])
		}
	}
	d := make([]float32, p*m)
	linalg.Sgemm(false, false, p, m, r, 1, q32, r, w.z, m, 0, d, m)
	return d
}
