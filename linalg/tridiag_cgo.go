//go:build cgo && !noopenblas

package linalg

/*
#cgo LDFLAGS: -lopenblas
#include <stddef.h>

void dsytrd_(char*, int*, double*, int*, double*, double*, double*, double*, int*, int*, size_t);
void dormtr_(char*, char*, char*, int*, int*, double*, int*, double*, double*, int*, double*, int*, int*, size_t, size_t, size_t);
*/
import "C"

import "fmt"

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
	cn, clda, info := C.int(n), C.int(lda), C.int(0)
	lwork := C.int(-1)
	var wq C.double
	C.dsytrd_(&lower, &cn, dptr(a), &clda, dptr(d), dptr(e), dptr(tau), &wq, &lwork, &info, 1)
	work := make([]float64, int(wq)+1)
	lwork = C.int(len(work))
	C.dsytrd_(&lower, &cn, dptr(a), &clda, dptr(d), dptr(e), dptr(tau), dptr(work), &lwork, &info, 1)
	if info != 0 {
		return fmt.Errorf("linalg: dsytrd failed (info=%d)", info)
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
	side, tr := C.char('L'), C.char('T')
	cm, cn, clda, cldb, info := C.int(n), C.int(nrhs), C.int(lda), C.int(ldb), C.int(0)
	lwork := C.int(-1)
	var wq C.double
	C.dormtr_(&side, &lower, &tr, &cm, &cn, dptr(a), &clda, dptr(tau), dptr(b), &cldb, &wq, &lwork, &info, 1, 1, 1)
	work := make([]float64, int(wq)+1)
	lwork = C.int(len(work))
	C.dormtr_(&side, &lower, &tr, &cm, &cn, dptr(a), &clda, dptr(tau), dptr(b), &cldb, dptr(work), &lwork, &info, 1, 1, 1)
	if info != 0 {
		panic(fmt.Sprintf("linalg.DormtrRows: info=%d", info))
	}
}
