//go:build !cgo || noopenblas

package linalg

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
)

// Dsytrd reduces the symmetric n×n a (upper triangle) to tridiagonal form
// T = Qᵀ a Q by orthogonal similarity: d (n values) receives T's diagonal,
// e (n-1 values) its off-diagonal, and a and tau (n-1 values) the
// Householder reflectors that represent Q, for DormtrRows.
func Dsytrd(n int, a []float64, lda int, d, e, tau []float64) error {
	checkSym("Dsytrd", n, lda, len(a))
	if len(d) < n || len(e) < max(n-1, 0) || len(tau) < max(n-1, 0) {
		panic("linalg.Dsytrd: d, e or tau too short")
	}
	if n == 0 {
		return nil
	}
	if n == 1 {
		d[0] = a[0]
		return nil
	}
	work := make([]float64, 1)
	lpk.Dsytrd(blas.Upper, n, a, lda, d, e, tau, work, -1)
	work = make([]float64, int(work[0])+1)
	lpk.Dsytrd(blas.Upper, n, a, lda, d, e, tau, work, len(work))
	for _, v := range d[:n] {
		if v != v {
			return fmt.Errorf("linalg: dsytrd produced NaN")
		}
	}
	return nil
}

// DormtrRows replaces each of the nrhs rows x of b (nrhs×n, leading
// dimension ldb) by Qᵀ x, where Q is the orthogonal matrix of the last
// Dsytrd of a.
func DormtrRows(n, nrhs int, a []float64, lda int, tau []float64, b []float64, ldb int) {
	checkSym("DormtrRows", n, lda, len(a))
	checkRows("DormtrRows", nrhs, n, ldb, len(b))
	if n <= 1 || nrhs == 0 {
		return
	}
	// Rows x -> Qᵀx is B -> B Q in row-major terms; gonum has no
	// dormtr, so Q is formed explicitly (in a copy: a keeps the reflectors).
	q := make([]float64, n*n)
	for i := 0; i < n; i++ {
		copy(q[i*n:(i+1)*n], a[i*lda:i*lda+n])
	}
	work := make([]float64, 1)
	lpk.Dorgtr(blas.Upper, n, q, n, tau, work, -1)
	work = make([]float64, int(work[0])+1)
	lpk.Dorgtr(blas.Upper, n, q, n, tau, work, len(work))
	c := make([]float64, nrhs*n)
	for i := 0; i < nrhs; i++ {
		copy(c[i*n:(i+1)*n], b[i*ldb:i*ldb+n])
	}
	Dgemm(false, false, nrhs, n, n, 1, c, n, q, n, 0, b, ldb)
}
