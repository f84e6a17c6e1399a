//go:build !cgo || noopenblas

package linalg

import (
	"fmt"
	"runtime"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/lapack"
	glapack "gonum.org/v1/gonum/lapack/gonum"
)

const backend = "gonum"

func backendVersion() string { return "pure Go (gonum)" }

var (
	impl gonum.Implementation
	lpk  glapack.Implementation
)

// Sgemm computes c = alpha*op(a)*op(b) + beta*c, where op(a) is m×k and
// op(b) is k×n; op transposes when tA (tB) is true.
func Sgemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkGemm("Sgemm", tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	if m == 0 || n == 0 {
		return
	}
	impl.Sgemm(tr(tA), tr(tB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Dgemm is Sgemm in float64.
func Dgemm(tA, tB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	checkGemm("Dgemm", tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	if m == 0 || n == 0 {
		return
	}
	impl.Dgemm(tr(tA), tr(tB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Ssyrk updates the upper triangle of the n×n symmetric c with
// c = alpha*aᵀa + beta*c when tA is true (a is k×n) or
// c = alpha*a*aᵀ + beta*c when tA is false (a is n×k).
func Ssyrk(tA bool, n, k int, alpha float32, a []float32, lda int, beta float32, c []float32, ldc int) {
	checkSyrk("Ssyrk", tA, n, k, len(a), lda, len(c), ldc)
	if n == 0 {
		return
	}
	psyrk(kernels32(), true, tA, n, k, alpha, a, lda, beta, c, ldc)
}

// SsyrkLower is Ssyrk on the lower triangle of c (elements with j <= i);
// the upper triangle is neither read nor written.
func SsyrkLower(tA bool, n, k int, alpha float32, a []float32, lda int, beta float32, c []float32, ldc int) {
	checkSyrk("SsyrkLower", tA, n, k, len(a), lda, len(c), ldc)
	if n == 0 {
		return
	}
	psyrk(kernels32(), false, tA, n, k, alpha, a, lda, beta, c, ldc)
}

// Dsyrk is Ssyrk in float64.
func Dsyrk(tA bool, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	checkSyrk("Dsyrk", tA, n, k, len(a), lda, len(c), ldc)
	if n == 0 {
		return
	}
	psyrk(kernels64(), true, tA, n, k, alpha, a, lda, beta, c, ldc)
}

func up32(n int, a []float32, lda int) []float64 {
	d := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			d[i*n+j] = float64(a[i*lda+j])
		}
	}
	return d
}

func down32(n int, d []float64, a []float32, lda int) {
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			a[i*lda+j] = float32(d[i*n+j])
		}
	}
}

// Spotrf overwrites the upper triangle of the symmetric positive definite
// a with its Cholesky factor U (a = Uᵀ U).
func Spotrf(n int, a []float32, lda int) error {
	checkSym("Spotrf", n, lda, len(a))
	if n == 0 {
		return nil
	}
	if o := ppotrf(kernels32(), n, a, lda); o > 0 {
		return &NotPositiveDefiniteError{Order: o}
	}
	return nil
}

// Dpotrf is Spotrf in float64.
func Dpotrf(n int, a []float64, lda int) error {
	checkSym("Dpotrf", n, lda, len(a))
	if n == 0 {
		return nil
	}
	if o := ppotrf(kernels64(), n, a, lda); o > 0 {
		return &NotPositiveDefiniteError{Order: o}
	}
	return nil
}

// Spotrs solves a x = b for each of the nrhs right-hand sides stored as the
// rows of bt (nrhs×n, leading dimension ldb), given the factor from Spotrf.
// The solutions overwrite bt.
func Spotrs(n, nrhs int, a []float32, lda int, bt []float32, ldb int) {
	checkSym("Spotrs", n, lda, len(a))
	checkRows("Spotrs", nrhs, n, ldb, len(bt))
	if n == 0 || nrhs == 0 {
		return
	}
	// Uᵀ U x = b  <=>  xᵀ Uᵀ U = bᵀ: two triangular solves from the right.
	ppotrs(kernels32(), n, nrhs, a, lda, bt, ldb)
}

// Dpotrs is Spotrs in float64.
func Dpotrs(n, nrhs int, a []float64, lda int, bt []float64, ldb int) {
	checkSym("Dpotrs", n, lda, len(a))
	checkRows("Dpotrs", nrhs, n, ldb, len(bt))
	if n == 0 || nrhs == 0 {
		return
	}
	ppotrs(kernels64(), n, nrhs, a, lda, bt, ldb)
}

// Strtri overwrites the upper-triangular non-singular u (as returned by
// Spotrf) with its inverse.
func Strtri(n int, u []float32, ldu int) error {
	checkSym("Strtri", n, ldu, len(u))
	if n == 0 {
		return nil
	}
	d := up32(n, u, ldu)
	if err := Dtrtri(n, d, n); err != nil {
		return err
	}
	down32(n, d, u, ldu)
	return nil
}

// Dtrtri is Strtri in float64.
func Dtrtri(n int, u []float64, ldu int) error {
	checkSym("Dtrtri", n, ldu, len(u))
	if n == 0 {
		return nil
	}
	if !lpk.Dtrtri(blas.Upper, blas.NonUnit, n, u, ldu) {
		return fmt.Errorf("linalg: triangular matrix is singular")
	}
	return nil
}

// Dsyevd computes all eigenvalues of the symmetric a (upper triangle) in
// ascending order into w and, when vectors is true, overwrites a with the
// eigenvectors stored as rows: row i of a is the unit eigenvector for w[i].
func Dsyevd(vectors bool, n int, a []float64, lda int, w []float64) error {
	checkSym("Dsyevd", n, lda, len(a))
	if n == 0 {
		return nil
	}
	jobz := lapackNone
	if vectors {
		jobz = lapackVectors
	}
	work := make([]float64, 1)
	lpk.Dsyev(jobz, blas.Upper, n, a, lda, w, work, -1)
	work = make([]float64, int(work[0]))
	if !lpk.Dsyev(jobz, blas.Upper, n, a, lda, w, work, len(work)) {
		return fmt.Errorf("linalg: dsyev failed to converge")
	}
	if vectors {
		// gonum returns eigenvectors in columns; transpose to rows.
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				a[i*lda+j], a[j*lda+i] = a[j*lda+i], a[i*lda+j]
			}
		}
	}
	return nil
}

// Ssyevd is Dsyevd in float32.
func Ssyevd(vectors bool, n int, a []float32, lda int, w []float32) error {
	checkSym("Ssyevd", n, lda, len(a))
	d := up32(n, a, lda)
	dw := make([]float64, n)
	if err := Dsyevd(vectors, n, d, n, dw); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		w[i] = float32(dw[i])
		if vectors {
			for j := 0; j < n; j++ {
				a[i*lda+j] = float32(d[i*n+j])
			}
		}
	}
	return nil
}

// Threads reports the goroutines the pure-Go fallback's syrk, Cholesky and
// solves spread over (GOMAXPROCS); its other routines are gonum's.
func Threads() int { return runtime.GOMAXPROCS(0) }

const (
	lapackNone    = lapack.EVNone
	lapackVectors = lapack.EVCompute
)
