package linalg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSgetrfSolvesGeneral solves a non-symmetric, well-conditioned system
// (diagonally dominant, κ < 3) by LU and checks the residual against the
// float32 bound n·u·‖A‖·‖x‖ with slack 4.
func TestSgetrfSolvesGeneral(t *testing.T) {
	const n, nrhs = 50, 3
	r := rand.New(rand.NewPCG(1, 2))
	a := make([]float32, n*n)
	for i := range a {
		a[i] = float32(r.Float64() - 0.5)
	}
	for i := 0; i < n; i++ {
		a[i*n+i] += n
	}
	orig := append([]float32(nil), a...)
	bt := make([]float32, nrhs*n)
	for i := range bt {
		bt[i] = float32(r.NormFloat64())
	}
	b0 := append([]float32(nil), bt...)
	ipiv := make([]int32, n)
	if err := Sgetrf(n, a, n, ipiv); err != nil {
		t.Fatal(err)
	}
	Sgetrs(n, nrhs, a, n, ipiv, bt, n)
	for rr := 0; rr < nrhs; rr++ {
		var worst, xnorm float64
		for i := 0; i < n; i++ {
			xnorm = math.Max(xnorm, math.Abs(float64(bt[rr*n+i])))
		}
		for i := 0; i < n; i++ {
			s := -float64(b0[rr*n+i])
			for j := 0; j < n; j++ {
				s += float64(orig[i*n+j]) * float64(bt[rr*n+j])
			}
			worst = math.Max(worst, math.Abs(s))
		}
		if bound := 4 * n * 0x1p-24 * 1.5 * n * xnorm; worst > bound {
			t.Errorf("rhs %d: residual %.3g > %.3g", rr, worst, bound)
		}
	}
	sing := make([]float32, 4) // 2×2 zeros
	if err := Sgetrf(2, sing, 2, ipiv); err == nil {
		t.Error("singular matrix: no error")
	}
}
