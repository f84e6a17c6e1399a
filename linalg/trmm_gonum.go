//go:build !cgo || noopenblas

package linalg

import "gonum.org/v1/gonum/blas"

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
	impl.Ssymm(blas.Right, blas.Lower, m, n, alpha, a, lda, b, ldb, beta, c, ldc)
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
	impl.Strmm(blas.Right, blas.Upper, tr(tU), blas.NonUnit, m, n, alpha, u, ldu, b, ldb)
}
