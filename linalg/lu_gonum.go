//go:build !cgo || noopenblas

package linalg

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
)

// Sgetrf overwrites the general n×n row-major a with its LU factorisation
// with partial pivoting; ipiv receives the n pivots. It costs (2/3)n³
// flops, twice Spotrf, and is here to measure that (flycl bench
// components). The pure-Go fallback works in float64.
func Sgetrf(n int, a []float32, lda int, ipiv []int32) error {
	checkRows("Sgetrf", n, n, lda, len(a))
	if len(ipiv) < n {
		panic("linalg.Sgetrf: ipiv too short")
	}
	if n == 0 {
		return nil
	}
	d := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			d[i*n+j] = float64(a[i*lda+j])
		}
	}
	p := make([]int, n)
	ok := lpk.Dgetrf(n, n, d, n, p)
	for i := 0; i < n; i++ {
		ipiv[i] = int32(p[i])
		for j := 0; j < n; j++ {
			a[i*lda+j] = float32(d[i*n+j])
		}
	}
	if !ok {
		return fmt.Errorf("linalg: Sgetrf: matrix is singular")
	}
	return nil
}

// Sgetrs solves a x = b for each of the nrhs right-hand sides stored as the
// rows of bt (nrhs×n), given the factorisation from Sgetrf.
func Sgetrs(n, nrhs int, a []float32, lda int, ipiv []int32, bt []float32, ldb int) {
	checkRows("Sgetrs", n, n, lda, len(a))
	checkRows("Sgetrs", nrhs, n, ldb, len(bt))
	if n == 0 || nrhs == 0 {
		return
	}
	d := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			d[i*n+j] = float64(a[i*lda+j])
		}
	}
	p := make([]int, n)
	for i := range p {
		p[i] = int(ipiv[i])
	}
	b := make([]float64, n*nrhs) // n×nrhs: column r is row r of bt
	for r := 0; r < nrhs; r++ {
		for i := 0; i < n; i++ {
			b[i*nrhs+r] = float64(bt[r*ldb+i])
		}
	}
	lpk.Dgetrs(blas.NoTrans, n, nrhs, d, n, p, b, nrhs)
	for r := 0; r < nrhs; r++ {
		for i := 0; i < n; i++ {
			bt[r*ldb+i] = float32(b[i*nrhs+r])
		}
	}
}
