//go:build !cgo || noopenblas

package linalg

// SdotRows sets c[i*ldc+j] to the dot product of row i of a (n×k, leading
// dimension lda) and row j of b (m×k, leading dimension ldb): c = a bᵀ,
// as Sgemm(false, true, n, m, k, 1, a, lda, b, ldb, 0, c, ldc) computes
// it, but every element by one fixed sequence of operations, so that its
// bits depend on its two rows alone, never on n, m, its position in c, its
// neighbours or the number of threads (a BLAS gemm rounds an element
// differently depending on where it falls in the kernel's blocks). It runs
// on the calling goroutine only: callers split the rows to use more cores.
// This build (no cgo, or the tag noopenblas) uses portable Go code.
func SdotRows(n, m, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	checkGemm("SdotRows", false, true, n, m, k, len(a), lda, len(b), ldb, len(c), ldc)
	k8 := k &^ 7
	for j := 0; j < m; j++ {
		b0 := b[j*ldb : j*ldb+k]
		for i := 0; i < n; i++ {
			a0 := a[i*lda : i*lda+k]
			var s [8]float32
			for kk := 0; kk < k8; kk += 8 {
				x, w := a0[kk:kk+8:kk+8], b0[kk:kk+8:kk+8]
				for l := range s {
					s[l] += float32(x[l] * w[l])
				}
			}
			t := ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]))
			for kk := k8; kk < k; kk++ {
				t += float32(a0[kk] * b0[kk])
			}
			c[i*ldc+j] = t
		}
	}
}

// DotRowsKernel names the kernel SdotRows uses: "go" in this build.
func DotRowsKernel() string { return "go" }
