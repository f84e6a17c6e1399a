package linalg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBandReduction checks B = Qᵀ A Q through quadratic forms: for random
// y, z = Qᵀ y must keep ‖z‖ = ‖y‖ and yᵀ A y = zᵀ B z, which holds only if
// both the band and the reflectors are right. The tolerance is float32
// rounding of an orthogonal reduction: n·u·‖A‖_F·‖y‖².
func TestBandReduction(t *testing.T) {
	if !HaveBandReduction {
		t.Skip("pure-Go backend: no band reduction")
	}
	for _, tc := range []struct{ n, kd int }{{10, 3}, {64, 8}, {130, 32}, {200, 64}} {
		n, kd := tc.n, tc.kd
		r := rand.New(rand.NewPCG(uint64(n), 1))
		a := make([]float32, n*n)
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				v := float32(r.NormFloat64())
				a[i*n+j], a[j*n+i] = v, v
			}
		}
		orig := append([]float32(nil), a...)
		var fro float64
		for _, v := range a {
			fro += float64(v) * float64(v)
		}
		fro = math.Sqrt(fro)
		ab := make([]float32, n*(kd+1))
		tau := make([]float32, n)
		if err := SsytrdToBand(n, kd, a, n, ab, tau); err != nil {
			t.Fatal(err)
		}
		// The reduction works in the upper triangle (row-major) and must
		// leave the strict lower one as it was: ridge keeps HᵀH there.
		for i := 0; i < n; i++ {
			for j := 0; j < i; j++ {
				if a[i*n+j] != orig[i*n+j] {
					t.Fatalf("n=%d kd=%d: a[%d][%d] changed from %g to %g", n, kd, i, j, orig[i*n+j], a[i*n+j])
				}
			}
		}
		const nrhs = 3
		y := make([]float32, nrhs*n)
		for i := range y {
			y[i] = float32(r.NormFloat64())
		}
		z := append([]float32(nil), y...)
		if err := ApplyBandQT(n, kd, a, n, tau, nrhs, z, n); err != nil {
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
			tol := float64(n) * 0x1p-24 * fro * yy
			if math.Abs(yy-zz) > float64(n)*0x1p-24*yy || math.Abs(yay-zbz) > tol {
				t.Errorf("n=%d kd=%d rhs %d: ‖y‖² %.6g vs ‖Qᵀy‖² %.6g; yᵀAy %.6g vs zᵀBz %.6g (tol %.2g)", n, kd, q, yy, zz, yay, zbz, tol)
			}
		}
	}
}

// TestBandReduction64 is TestBandReduction for DsytrdToBand and
// ApplyBandQT64, with float64's unit roundoff in the tolerances, and
// checks DbandEigenvalues against Dsyevd on the original matrix: both are
// backward stable, so the eigenvalues agree to n·u·‖A‖_F (Weyl).
func TestBandReduction64(t *testing.T) {
	if !HaveBandReduction {
		t.Skip("pure-Go backend: no band reduction")
	}
	const u = 0x1p-53
	for _, tc := range []struct{ n, kd int }{{10, 3}, {64, 8}, {130, 32}, {200, 64}} {
		n, kd := tc.n, tc.kd
		r := rand.New(rand.NewPCG(uint64(n), 2))
		a := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				v := r.NormFloat64()
				a[i*n+j], a[j*n+i] = v, v
			}
		}
		orig := append([]float64(nil), a...)
		var fro float64
		for _, v := range a {
			fro += v * v
		}
		fro = math.Sqrt(fro)
		ab := make([]float64, n*(kd+1))
		tau := make([]float64, n)
		if err := DsytrdToBand(n, kd, a, n, ab, tau); err != nil {
			t.Fatal(err)
		}
		const nrhs = 3
		y := make([]float64, nrhs*n)
		for i := range y {
			y[i] = r.NormFloat64()
		}
		z := append([]float64(nil), y...)
		if err := ApplyBandQT64(n, kd, a, n, tau, nrhs, z, n); err != nil {
			t.Fatal(err)
		}
		band := func(i, j int) float64 {
			if i < j {
				i, j = j, i
			}
			if i-j > kd {
				return 0
			}
			return ab[j*(kd+1)+i-j]
		}
		for q := 0; q < nrhs; q++ {
			yq, zq := y[q*n:(q+1)*n], z[q*n:(q+1)*n]
			var yy, zz, yay, zbz float64
			for i := 0; i < n; i++ {
				yy += yq[i] * yq[i]
				zz += zq[i] * zq[i]
				for j := 0; j < n; j++ {
					yay += yq[i] * orig[i*n+j] * yq[j]
					zbz += zq[i] * band(i, j) * zq[j]
				}
			}
			tol := float64(n) * u * fro * yy
			if math.Abs(yy-zz) > float64(n)*u*yy || math.Abs(yay-zbz) > tol {
				t.Errorf("n=%d kd=%d rhs %d: ‖y‖² %.15g vs ‖Qᵀy‖² %.15g; yᵀAy %.15g vs zᵀBz %.15g (tol %.2g)", n, kd, q, yy, zz, yay, zbz, tol)
			}
		}
		got := make([]float64, n)
		if err := DbandEigenvalues(n, kd, ab, got); err != nil {
			t.Fatal(err)
		}
		want := make([]float64, n)
		if err := Dsyevd(false, n, orig, n, want); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if d := math.Abs(got[i] - want[i]); d > float64(n)*u*fro {
				t.Errorf("n=%d kd=%d: eigenvalue %d: band %.15g, dsyevd %.15g", n, kd, i, got[i], want[i])
			}
		}
	}
}
