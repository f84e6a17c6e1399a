package linalg

import (
	"fmt"

	glapack "gonum.org/v1/gonum/lapack/gonum"
)

// Dsterf computes the eigenvalues of the symmetric tridiagonal matrix with
// diagonal d (n values) and off-diagonal e (n-1 values) into d, in
// ascending order; e is destroyed. It uses gonum's pure-Go implementation
// of LAPACK's dsterf (O(n²) work, no vectors) on every backend.
func Dsterf(n int, d, e []float64) error {
	if len(d) < n || len(e) < max(n-1, 0) {
		panic("linalg.Dsterf: d or e too short")
	}
	if n <= 1 {
		return nil
	}
	if !(glapack.Implementation{}).Dsterf(n, d, e) {
		return fmt.Errorf("linalg: dsterf failed to converge")
	}
	return nil
}
