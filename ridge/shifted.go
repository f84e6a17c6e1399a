package ridge

import (
	"math"
	"slices"

	"github.com/flycl/flycl/linalg"
)

// The implementations of shifted (gcvscore.go): dense Cholesky in float32
// or float64, and three that work on an orthogonal reduction of A made
// once for the whole grid (eigen, tridiagonal, band).

// dense factors A + λI by a dense Cholesky factorisation in T, the
// factor and its inverse in the upper triangle of a (n×n, row-major),
// A in its strict lower triangle (kept) and diag (float64, so that
// A[i][i] + λ is rounded once).
type dense[T float32 | float64] struct {
	a    []T
	diag []float64
	n    int
}

// newDense returns the dense factorisation of the matrix whose strict
// lower triangle and diagonal are in a (n×n). The diagonal and upper
// triangle of a are scratch from then on.
func newDense[T float32 | float64](a []T, n int) *dense[T] {
	d := make([]float64, n)
	for i := range d {
		d[i] = float64(a[i*n+i])
	}
	return &dense[T]{a: a, diag: d, n: n}
}

func (d *dense[T]) factor(lambda float64) bool {
	n := d.n
	mirrorLower(d.a, n)
	for i, v := range d.diag {
		d.a[i*n+i] = T(v + lambda)
	}
	var err error
	switch a := any(d.a).(type) {
	case []float32:
		err = linalg.Spotrf(n, a, n)
	case []float64:
		err = linalg.Dpotrf(n, a, n)
	}
	return err == nil
}

func (d *dense[T]) solve(x []T, nrhs int) {
	switch a := any(d.a).(type) {
	case []float32:
		linalg.Spotrs(d.n, nrhs, a, d.n, any(x).([]float32), d.n)
	case []float64:
		linalg.Dpotrs(d.n, nrhs, a, d.n, any(x).([]float64), d.n)
	}
}

// invTrace is ‖U⁻¹‖²_F for the Cholesky factor U; it overwrites the
// factor with U⁻¹.
func (d *dense[T]) invTrace() (float64, bool) {
	var err error
	switch a := any(d.a).(type) {
	case []float32:
		err = linalg.Strtri(d.n, a, d.n)
	case []float64:
		err = linalg.Dtrtri(d.n, a, d.n)
	}
	if err != nil {
		return 0, false
	}
	return upperSumSq(d.a, d.n), true
}

// restoreDiagonal writes A's diagonal back into a.
func (d *dense[T]) restoreDiagonal() {
	for i, v := range d.diag {
		d.a[i*d.n+i] = T(v)
	}
}

// eigen is A = U Σ Uᵀ: A + λI = U (Σ + λI) Uᵀ, so in the basis U each
// λ costs O(n) per right-hand side. Σ is clamped at 0 (A is positive
// semi-definite), so every λ > 0 factors.
type eigen struct {
	s      []float64 // eigenvalues
	lambda float64
}

// eigenOf eigendecomposes the symmetric a (n×n, upper triangle read) in
// float64, destroying it, and expresses the nrhs rows of rhs (each of
// length n) in the eigenvector basis: rhs ← rhs U.
func eigenOf(a []float64, n int, rhs []float64, nrhs int) (*eigen, error) {
	s := make([]float64, n)
	if err := linalg.Dsyevd(true, n, a, n, s); err != nil {
		return nil, err
	}
	for i := range s {
		s[i] = max(s[i], 0)
	}
	// row i of a is eigenvector i
	rot := make([]float64, len(rhs))
	linalg.Dgemm(false, true, nrhs, n, n, 1, rhs, n, a, n, 0, rot, n)
	copy(rhs, rot)
	return &eigen{s: s}, nil
}

func (e *eigen) factor(lambda float64) bool {
	e.lambda = lambda
	return true
}

func (e *eigen) solve(x []float64, nrhs int) {
	n := len(e.s)
	for c := 0; c < nrhs; c++ {
		xc := x[c*n : (c+1)*n]
		for i, s := range e.s {
			xc[i] /= s + e.lambda
		}
	}
}

func (e *eigen) invTrace() (float64, bool) {
	var tr float64
	for _, s := range e.s {
		tr += 1 / (s + e.lambda)
	}
	return tr, true
}

// tridiag is A = Q T Qᵀ with T tridiagonal (diagonal d, off-diagonal e),
// T + λI factored as L D Lᵀ (D in ldl, the sub-diagonal of the unit L in
// low): O(n) per λ and right-hand side.
type tridiag struct {
	d, e, ldl, low []float64
}

// reduceTridiag reduces the symmetric g (m×m, upper triangle read) to
// tridiagonal form by Householder reflections in float64 (LAPACK's
// dsytrd), destroying g, and applies Qᵀ to the nc rows of s.
func reduceTridiag(g []float64, m int, s []float64, nc int) (*tridiag, error) {
	t := &tridiag{
		d: make([]float64, m), e: make([]float64, max(m-1, 0)),
		ldl: make([]float64, m), low: make([]float64, max(m-1, 0)),
	}
	tau := make([]float64, max(m-1, 0))
	if err := linalg.Dsytrd(m, g, m, t.d, t.e, tau); err != nil {
		return nil, err
	}
	linalg.DormtrRows(m, nc, g, m, tau, s, m)
	return t, nil
}

// eigenvalues returns those of T, descending and clamped at 0, or nil if
// they did not converge.
func (t *tridiag) eigenvalues() []float64 {
	sig := slices.Clone(t.d)
	if err := linalg.Dsterf(len(sig), sig, slices.Clone(t.e)); err != nil {
		return nil
	}
	return descendingNonNegative(sig)
}

func (t *tridiag) factor(lambda float64) bool {
	d, e, ldl, low := t.d, t.e, t.ldl, t.low
	ldl[0] = d[0] + lambda
	if !(ldl[0] > 0) {
		return false
	}
	for i := 1; i < len(d); i++ {
		low[i-1] = e[i-1] / ldl[i-1]
		ldl[i] = d[i] + lambda - low[i-1]*e[i-1]
		if !(ldl[i] > 0) {
			return false
		}
	}
	return true
}

func (t *tridiag) solve(x []float64, nrhs int) {
	n := len(t.d)
	ldl, low := t.ldl, t.low
	for c := 0; c < nrhs; c++ {
		x := x[c*n : (c+1)*n]
		for i := 1; i < n; i++ {
			x[i] -= low[i-1] * x[i-1]
		}
		for i := range x {
			x[i] /= ldl[i]
		}
		for i := n - 2; i >= 0; i-- {
			x[i] -= low[i] * x[i+1]
		}
	}
}

// invTrace sums the diagonal of Z = L⁻ᵀ D⁻¹ L⁻¹ from the last entry
// back: Z[i][i] = 1/D[i] + L[i+1][i]² Z[i+1][i+1] (Takahashi's
// recurrence for a bidiagonal L).
func (t *tridiag) invTrace() (float64, bool) {
	n := len(t.d)
	z := 1 / t.ldl[n-1]
	tr := z
	for i := n - 2; i >= 0; i-- {
		z = 1/t.ldl[i] + t.low[i]*t.low[i]*z
		tr += z
	}
	return tr, true
}

// band is A = Q B Qᵀ with B a symmetric band of kd sub-diagonals (rows:
// b[i*(kd+1) + kd-(i-j)] = B[i][j], see bandRows), B + λI factored by
// the banded Cholesky factorisation in float64: O(n·kd²) per λ.
type band struct {
	b, l, inv []float64 // B, its factor, the band of the inverse (scratch)
	n, kd     int
	// from is the smallest λ that is determinable (see bandNoiseFloor);
	// smaller ones do not factor.
	from float64
}

func newBand(b []float64, n, kd int) *band {
	w := kd + 1
	return &band{b: b, l: make([]float64, n*w), inv: make([]float64, n*w), n: n, kd: kd, from: math.Inf(-1)}
}

// reduceToBand reduces the symmetric a (order r, full) to a band B of kd
// sub-diagonals by an orthogonal similarity in T (LAPACK's first stage of
// the two-stage tridiagonal reduction, dsytrd_sy2sb or ssytrd_sy2sb, which
// works in a's upper triangle and keeps its strict lower one), applies Qᵀ
// to the nrhs rows of rhs in T, and returns B's factorisation, those rows
// in float64, and B in LAPACK's band layout. It is BLAS-3: the band GCV
// method reduces the codes' K or G in float32, the statistics GCV their G
// in float64.
func reduceToBand[T float32 | float64](a []T, r, kd int, rhs []T, nrhs int) (f *band, rows []float64, ab []T, err error) {
	ab = make([]T, r*(kd+1))
	tau := make([]T, r)
	switch a := any(a).(type) {
	case []float32:
		ab, tau, rhs := any(ab).([]float32), any(tau).([]float32), any(rhs).([]float32)
		if err = linalg.SsytrdToBand(r, kd, a, r, ab, tau); err == nil {
			err = linalg.ApplyBandQT(r, kd, a, r, tau, nrhs, rhs, r)
		}
	case []float64:
		ab, tau, rhs := any(ab).([]float64), any(tau).([]float64), any(rhs).([]float64)
		if err = linalg.DsytrdToBand(r, kd, a, r, ab, tau); err == nil {
			err = linalg.ApplyBandQT64(r, kd, a, r, tau, nrhs, rhs, r)
		}
	}
	if err != nil {
		return nil, nil, nil, err
	}
	rows = make([]float64, len(rhs))
	for i, v := range rhs {
		rows[i] = float64(v)
	}
	return newBand(bandRows(ab, r, kd), r, kd), rows, ab, nil
}

// withNoiseFloor makes λ with λ_min(B) + λ ≤ floor fail to factor: not
// determinable from a B whose rounding noise reaches floor. It costs one
// banded factorisation, usually (determinableFrom).
func (r *band) withNoiseFloor(grid []float64, floor float64) *band {
	r.from = determinableFrom(r.b, r.l, r.n, r.kd, grid, floor)
	return r
}

// norm estimates ‖B‖₂ from below (bandNorm).
func (r *band) norm() float64 {
	return bandNorm(r.b, r.n, r.kd, r.inv[:r.n], make([]float64, r.n))
}

func (r *band) factor(lambda float64) bool {
	return lambda >= r.from && bandCholesky(r.b, r.l, r.n, r.kd, lambda)
}

func (r *band) solve(x []float64, nrhs int) {
	for c := 0; c < nrhs; c++ {
		bandSolve(r.l, r.n, r.kd, x[c*r.n:(c+1)*r.n])
	}
}

func (r *band) invTrace() (float64, bool) { return bandInverseTrace(r.l, r.inv, r.n, r.kd), true }

// descendingNonNegative sorts ascending eigenvalues descending and clamps
// them at 0 (the Gram matrix is positive semi-definite).
func descendingNonNegative(sig []float64) []float64 {
	slices.Sort(sig)
	slices.Reverse(sig)
	for i := range sig {
		sig[i] = max(sig[i], 0)
	}
	return sig
}
