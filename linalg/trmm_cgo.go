//go:build cgo && !noopenblas

package linalg

/*
#include <cblas.h>
*/
import "C"

// SsymmLowerRight computes c = alpha·b·A + beta·c, where A is the n×n
// symmetric matrix referenced through its lower triangle (elements
// a[i*lda+j] with j <= i; the strict upper triangle is neither read nor
// written) and b, c are m×n.
func SsymmLowerRight(m, n int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkSym("SsymmLowerRight", n, lda, len(a))
	checkRows("SsymmLowerRight", m, n, ldb, len(b))
	checkRows("SsymmLowerRight", m, n, ldc, len(c))
	if m == 0 || n == 0 {
		return
	}
	if m <= symvRows {
		// Row i of c is alpha·A·(row i of b) + beta·(row i of c) (A is
		// symmetric): OpenBLAS's ssymv streams the triangle once per row,
		// about 3× faster than its ssymm for 2 rows at n = 10000 (8.5 ms
		// against 28 ms a row on the 2-core Xeon), which packs the matrix.
		for i := 0; i < m; i++ {
			C.cblas_ssymv(C.CblasRowMajor, C.CblasLower, C.blasint(n), C.float(alpha), fptr(a), C.blasint(lda),
				fptr(b[i*ldb:]), 1, C.float(beta), fptr(c[i*ldc:]), 1)
		}
		return
	}
	C.cblas_ssymm(C.CblasRowMajor, C.CblasRight, C.CblasLower, C.blasint(m), C.blasint(n),
		C.float(alpha), fptr(a), C.blasint(lda), fptr(b), C.blasint(ldb), C.float(beta), fptr(c), C.blasint(ldc))
}

// StrmmUpperRight overwrites the m×n b with alpha·b·op(U), where U is the
// n×n upper triangle of u (elements u[i*ldu+j] with j >= i; the strict
// lower triangle is neither read nor written) and op(U) is Uᵀ when tU
// is true.
func StrmmUpperRight(tU bool, m, n int, alpha float32, u []float32, ldu int, b []float32, ldb int) {
	checkSym("StrmmUpperRight", n, ldu, len(u))
	checkRows("StrmmUpperRight", m, n, ldb, len(b))
	if m == 0 || n == 0 {
		return
	}
	C.cblas_strmm(C.CblasRowMajor, C.CblasRight, C.CblasUpper, trans(tU), C.CblasNonUnit, C.blasint(m), C.blasint(n),
		C.float(alpha), fptr(u), C.blasint(ldu), fptr(b), C.blasint(ldb))
}
