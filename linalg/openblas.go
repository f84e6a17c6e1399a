//go:build cgo && !noopenblas

package linalg

/*
#cgo LDFLAGS: -lopenblas
#include <stddef.h>
#include <cblas.h>

void spotrf_(char*, int*, float*, int*, int*, size_t);
void dpotrf_(char*, int*, double*, int*, int*, size_t);
void spotrs_(char*, int*, int*, float*, int*, float*, int*, int*, size_t);
void dpotrs_(char*, int*, int*, double*, int*, double*, int*, int*, size_t);
void strtri_(char*, char*, int*, float*, int*, int*, size_t, size_t);
void dtrtri_(char*, char*, int*, double*, int*, int*, size_t, size_t);
void ssyevd_(char*, char*, int*, float*, int*, float*, float*, int*, int*, int*, int*, size_t, size_t);
void dsyevd_(char*, char*, int*, double*, int*, double*, double*, int*, int*, int*, int*, size_t, size_t);
*/
import "C"

import (
	"fmt"
	"unsafe"
)

const backend = "openblas"

// backendVersion is OpenBLAS's build configuration (openblas_get_config:
// version, DYNAMIC_ARCH, the core in use, MAX_THREADS).
func backendVersion() string { return C.GoString(C.openblas_get_config()) }

func trans(t bool) uint32 {
	if t {
		return C.CblasTrans
	}
	return C.CblasNoTrans
}

func fptr(s []float32) *C.float {
	if len(s) == 0 {
		return nil
	}
	return (*C.float)(unsafe.Pointer(&s[0]))
}

func dptr(s []float64) *C.double {
	if len(s) == 0 {
		return nil
	}
	return (*C.double)(unsafe.Pointer(&s[0]))
}

// Sgemm computes c = alpha*op(a)*op(b) + beta*c, where op(a) is m×k and
// op(b) is k×n; op transposes when tA (tB) is true.
func Sgemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkGemm("Sgemm", tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	if m == 0 || n == 0 {
		return
	}
	C.cblas_sgemm(C.CblasRowMajor, trans(tA), trans(tB), C.blasint(m), C.blasint(n), C.blasint(k),
		C.float(alpha), fptr(a), C.blasint(lda), fptr(b), C.blasint(ldb), C.float(beta), fptr(c), C.blasint(ldc))
}

// Dgemm is Sgemm in float64.
func Dgemm(tA, tB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	checkGemm("Dgemm", tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	if m == 0 || n == 0 {
		return
	}
	C.cblas_dgemm(C.CblasRowMajor, trans(tA), trans(tB), C.blasint(m), C.blasint(n), C.blasint(k),
		C.double(alpha), dptr(a), C.blasint(lda), dptr(b), C.blasint(ldb), C.double(beta), dptr(c), C.blasint(ldc))
}

// Ssyrk updates the upper triangle of the n×n symmetric c with
// c = alpha*aᵀa + beta*c when tA is true (a is k×n) or
// c = alpha*a*aᵀ + beta*c when tA is false (a is n×k).
func Ssyrk(tA bool, n, k int, alpha float32, a []float32, lda int, beta float32, c []float32, ldc int) {
	checkSyrk("Ssyrk", tA, n, k, len(a), lda, len(c), ldc)
	if n == 0 {
		return
	}
	C.cblas_ssyrk(C.CblasRowMajor, C.CblasUpper, trans(tA), C.blasint(n), C.blasint(k),
		C.float(alpha), fptr(a), C.blasint(lda), C.float(beta), fptr(c), C.blasint(ldc))
}

// SsyrkLower is Ssyrk on the lower triangle of c (elements with j <= i);
// the upper triangle is neither read nor written.
func SsyrkLower(tA bool, n, k int, alpha float32, a []float32, lda int, beta float32, c []float32, ldc int) {
	checkSyrk("SsyrkLower", tA, n, k, len(a), lda, len(c), ldc)
	if n == 0 {
		return
	}
	C.cblas_ssyrk(C.CblasRowMajor, C.CblasLower, trans(tA), C.blasint(n), C.blasint(k),
		C.float(alpha), fptr(a), C.blasint(lda), C.float(beta), fptr(c), C.blasint(ldc))
}

// Dsyrk is Ssyrk in float64.
func Dsyrk(tA bool, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	checkSyrk("Dsyrk", tA, n, k, len(a), lda, len(c), ldc)
	if n == 0 {
		return
	}
	C.cblas_dsyrk(C.CblasRowMajor, C.CblasUpper, trans(tA), C.blasint(n), C.blasint(k),
		C.double(alpha), dptr(a), C.blasint(lda), C.double(beta), dptr(c), C.blasint(ldc))
}

// row-major upper == column-major lower
var lower = C.char('L')

// Spotrf overwrites the upper triangle of the symmetric positive definite
// a with its Cholesky factor U (a = Uᵀ U).
func Spotrf(n int, a []float32, lda int) error {
	checkSym("Spotrf", n, lda, len(a))
	if n == 0 {
		return nil
	}
	cn, clda, info := C.int(n), C.int(lda), C.int(0)
	C.spotrf_(&lower, &cn, fptr(a), &clda, &info, 1)
	return potrfErr(int(info))
}

// Dpotrf is Spotrf in float64.
func Dpotrf(n int, a []float64, lda int) error {
	checkSym("Dpotrf", n, lda, len(a))
	if n == 0 {
		return nil
	}
	cn, clda, info := C.int(n), C.int(lda), C.int(0)
	C.dpotrf_(&lower, &cn, dptr(a), &clda, &info, 1)
	return potrfErr(int(info))
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
	cn, cr, clda, cldb, info := C.int(n), C.int(nrhs), C.int(lda), C.int(ldb), C.int(0)
	C.spotrs_(&lower, &cn, &cr, fptr(a), &clda, fptr(bt), &cldb, &info, 1)
	if info != 0 {
		panic(fmt.Sprintf("linalg.Spotrs: info=%d", info))
	}
}

// Dpotrs is Spotrs in float64.
func Dpotrs(n, nrhs int, a []float64, lda int, bt []float64, ldb int) {
	checkSym("Dpotrs", n, lda, len(a))
	checkRows("Dpotrs", nrhs, n, ldb, len(bt))
	if n == 0 || nrhs == 0 {
		return
	}
	cn, cr, clda, cldb, info := C.int(n), C.int(nrhs), C.int(lda), C.int(ldb), C.int(0)
	C.dpotrs_(&lower, &cn, &cr, dptr(a), &clda, dptr(bt), &cldb, &info, 1)
	if info != 0 {
		panic(fmt.Sprintf("linalg.Dpotrs: info=%d", info))
	}
}

// Strtri overwrites the upper-triangular non-singular u (as returned by
// Spotrf) with its inverse.
func Strtri(n int, u []float32, ldu int) error {
	checkSym("Strtri", n, ldu, len(u))
	if n == 0 {
		return nil
	}
	diag := C.char('N')
	cn, cld, info := C.int(n), C.int(ldu), C.int(0)
	C.strtri_(&lower, &diag, &cn, fptr(u), &cld, &info, 1, 1)
	return trtriErr(int(info))
}

// Dtrtri is Strtri in float64.
func Dtrtri(n int, u []float64, ldu int) error {
	checkSym("Dtrtri", n, ldu, len(u))
	if n == 0 {
		return nil
	}
	diag := C.char('N')
	cn, cld, info := C.int(n), C.int(ldu), C.int(0)
	C.dtrtri_(&lower, &diag, &cn, dptr(u), &cld, &info, 1, 1)
	return trtriErr(int(info))
}

// Dsyevd computes all eigenvalues of the symmetric a (upper triangle) in
// ascending order into w and, when vectors is true, overwrites a with the
// eigenvectors stored as rows: row i of a is the unit eigenvector for w[i].
func Dsyevd(vectors bool, n int, a []float64, lda int, w []float64) error {
	checkSym("Dsyevd", n, lda, len(a))
	if len(w) < n {
		panic("linalg.Dsyevd: w too short")
	}
	if n == 0 {
		return nil
	}
	jobz := C.char('N')
	if vectors {
		jobz = 'V'
	}
	cn, clda, info := C.int(n), C.int(lda), C.int(0)
	lwork, liwork := C.int(-1), C.int(-1)
	var wq C.double
	var iq C.int
	C.dsyevd_(&jobz, &lower, &cn, dptr(a), &clda, dptr(w), &wq, &lwork, &iq, &liwork, &info, 1, 1)
	work := make([]float64, int(wq)+1)
	iwork := make([]int32, int(iq)+1)
	lwork, liwork = C.int(len(work)), C.int(len(iwork))
	C.dsyevd_(&jobz, &lower, &cn, dptr(a), &clda, dptr(w), dptr(work), &lwork,
		(*C.int)(unsafe.Pointer(&iwork[0])), &liwork, &info, 1, 1)
	if info != 0 {
		return fmt.Errorf("linalg: dsyevd failed to converge (info=%d)", info)
	}
	return nil
}

// Ssyevd is Dsyevd in float32.
func Ssyevd(vectors bool, n int, a []float32, lda int, w []float32) error {
	checkSym("Ssyevd", n, lda, len(a))
	if len(w) < n {
		panic("linalg.Ssyevd: w too short")
	}
	if n == 0 {
		return nil
	}
	jobz := C.char('N')
	if vectors {
		jobz = 'V'
	}
	cn, clda, info := C.int(n), C.int(lda), C.int(0)
	lwork, liwork := C.int(-1), C.int(-1)
	var wq C.float
	var iq C.int
	C.ssyevd_(&jobz, &lower, &cn, fptr(a), &clda, fptr(w), &wq, &lwork, &iq, &liwork, &info, 1, 1)
	work := make([]float32, int(wq)+1)
	iwork := make([]int32, int(iq)+1)
	lwork, liwork = C.int(len(work)), C.int(len(iwork))
	C.ssyevd_(&jobz, &lower, &cn, fptr(a), &clda, fptr(w), fptr(work), &lwork,
		(*C.int)(unsafe.Pointer(&iwork[0])), &liwork, &info, 1, 1)
	if info != 0 {
		return fmt.Errorf("linalg: ssyevd failed to converge (info=%d)", info)
	}
	return nil
}

// Threads reports how many threads OpenBLAS uses.
func Threads() int { return int(C.openblas_get_num_threads()) }
