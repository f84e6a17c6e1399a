package linalg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBandReduction checks B = Qᵀ A Q through quadratic forms, for the
// float32 (SsytrdToBand, ApplyBandQT) and float64 (DsytrdToBand,
// ApplyBandQT64) reductions: for random y, z = Qᵀ y must keep ‖z‖ = ‖y‖
// and yᵀ A y = zᵀ B z, which holds only if both the band and the
// reflectors are right. The tolerance is the rounding of an orthogonal
// reduction in the working precision: n·u·‖A‖_F·‖y‖². The reduction works
// in the upper triangle (row-major) and must leave the strict lower one
// as it was: ridge keeps HᵀH there.
func TestBandReduction(t *testing.T) {
	if !HaveBandReduction {
		t.Skip("pure-Go backend: no band reduction")
	}
	for _, tc := range []struct{ n, kd int }{{10, 3}, {64, 8}, {130, 32}, {200, 64}} {
		checkBandReduction(t, "float32", tc.n, tc.kd, 0x1p-24, SsytrdToBand, ApplyBandQT)
		ab := checkBandReduction(t, "float64", tc.n, tc.kd, 0x1p-53, DsytrdToBand, ApplyBandQT64)
		// DbandEigenvalues against Dsyevd on the same matrix: both are
		// backward stable, so the eigenvalues agree to n·u·‖A‖_F (Weyl).
		a, fro := symmetric[float64](tc.n, 1) // the matrix the float64 reduction reduced
		got := make([]float64, tc.n)
		if err := DbandEigenvalues(tc.n, tc.kd, ab, got); err != nil {
			t.Fatal(err)
		}
		want := make([]float64, tc.n)
		if err := Dsyevd(false, tc.n, a, tc.n, want); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if d := math.Abs(got[i] - want[i]); d > float64(tc.n)*0x1p-53*fro {
				t.Errorf("n=%d kd=%d: eigenvalue %d: band %.15g, dsyevd %.15g", tc.n, tc.kd, i, got[i], want[i])
			}
		}
	}
}

// symmetric returns a random symmetric n×n matrix (seeded by n and seed;
// the same values in float32 and float64 up to rounding)
// and its Frobenius norm.
func symmetric[T float32 | float64](n int, seed uint64) ([]T, float64) {
	r := rand.New(rand.NewPCG(uint64(n), seed))
	a := make([]T, n*n)
	var fro float64
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			v := T(r.NormFloat64())
			a[i*n+j], a[j*n+i] = v, v
		}
	}
	for _, v := range a {
		fro += float64(v) * float64(v)
	}
	return a, math.Sqrt(fro)
}

// checkBandReduction runs one reduction of TestBandReduction and returns
// the band it computed.
func checkBandReduction[T float32 | float64](t *testing.T, name string, n, kd int, u float64,
	reduce func(n, kd int, a []T, lda int, ab, tau []T) error,
	applyQT func(n, kd int, a []T, lda int, tau []T, nrhs int, bt []T, ldb int) error) []T {
	t.Helper()
	a, fro := symmetric[T](n, 1)
	orig := append([]T(nil), a...)
	ab := make([]T, n*(kd+1))
	tau := make([]T, n)
	if err := reduce(n, kd, a, n, ab, tau); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			if a[i*n+j] != orig[i*n+j] {
				t.Fatalf("%s n=%d kd=%d: a[%d][%d] changed from %g to %g", name, n, kd, i, j, orig[i*n+j], a[i*n+j])
			}
		}
	}
	const nrhs = 3
	r := rand.New(rand.NewPCG(uint64(n), 3))
	y := make([]T, nrhs*n)
	for i := range y {
		y[i] = T(r.NormFloat64())
	}
	z := append([]T(nil), y...)
	if err := applyQT(n, kd, a, n, tau, nrhs, z, n); err != nil {
		t.Fatal(err)
	}
	band := func(i, j int) float64 {
		if i < j {
			i, j = j, i
		}
		if i-j > kd {
			return 0
		}
		return float64(ab[j*(kd+1)+i-j])
	}
	for q := 0; q < nrhs; q++ {
		yq, zq := y[q*n:(q+1)*n], z[q*n:(q+1)*n]
		var yy, zz, yay, zbz float64
		for i := 0; i < n; i++ {
			yy += float64(yq[i]) * float64(yq[i])
			zz += float64(zq[i]) * float64(zq[i])
			for j := 0; j < n; j++ {
				yay += float64(yq[i]) * float64(orig[i*n+j]) * float64(yq[j])
				zbz += float64(zq[i]) * band(i, j) * float64(zq[j])
			}
		}
		tol := float64(n) * u * fro * yy
		if math.Abs(yy-zz) > float64(n)*u*yy || math.Abs(yay-zbz) > tol {
			t.Errorf("%s n=%d kd=%d rhs %d: ‖y‖² %.15g vs ‖Qᵀy‖² %.15g; yᵀAy %.15g vs zᵀBz %.15g (tol %.2g)", name, n, kd, q, yy, zz, yay, zbz, tol)
		}
	}
	return ab
}
