//go:build !cgo || noopenblas

package linalg

func sgatherRowsVec(n, m, p int, cols []int32, vals []float32, xt []float32, d, ldx int, h []float32, ldh int) int {
	return -1
}

func dgatherSparseVec(cols []int32, vals []float32, buf []float32, rows, ldb int, s []float64) int {
	return -1
}

func dscatterSparseVec(cols []int32, vals []float32, lo int, a []float64, acc []float64, rows, lda int) int {
	return -1
}

// SparseKernel names the kernel of SgatherRows, DgatherSparse and
// DscatterSparse: "go" in this build.
func SparseKernel() string { return "go" }
