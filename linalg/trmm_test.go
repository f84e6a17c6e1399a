package linalg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSsymmStrmmMatchNaive checks SsymmLowerRight and StrmmUpperRight
// against float64 loops that read only the triangle each routine is
// documented to read; the other triangle holds NaN, so a routine that read
// it would produce NaN. Each element is a sum of n float32 products of
// inputs in [-1, 1], so rounding is below n·2⁻²⁴·n in absolute value.
func TestSsymmStrmmMatchNaive(t *testing.T) {
	const rows, n = 3, 37
	r := rand.New(rand.NewPCG(1, 1))
	a := make([]float32, n*n)
	for i := range a {
		a[i] = float32(2*r.Float64() - 1)
	}
	b := make([]float32, rows*n)
	for i := range b {
		b[i] = float32(2*r.Float64() - 1)
	}
	tol := float64(n*n) * 0x1p-24
	// symmetric from the lower triangle: NaN above the diagonal
	low := append([]float32(nil), a...)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			low[i*n+j] = float32(math.NaN())
		}
	}
	sym := func(i, j int) float64 {
		if j > i {
			i, j = j, i
		}
		return float64(a[i*n+j])
	}
	// Up to symvRows rows take matrix-vector products, more one ssymm:
	// both, with alpha and beta, as the residuals in ridge use them.
	for _, sr := range []int{1, rows, symvRows + 3} {
		bs := make([]float32, sr*n)
		c0 := make([]float32, sr*n)
		for i := range bs {
			bs[i] = float32(2*r.Float64() - 1)
			c0[i] = float32(2*r.Float64() - 1)
		}
		c := append([]float32(nil), c0...)
		const alpha, beta = -0.5, 2
		SsymmLowerRight(sr, n, alpha, low, n, bs, n, beta, c, n)
		for r := 0; r < sr; r++ {
			for j := 0; j < n; j++ {
				var want float64
				for k := 0; k < n; k++ {
					want += float64(bs[r*n+k]) * sym(k, j)
				}
				want = alpha*want + beta*float64(c0[r*n+j])
				if d := math.Abs(float64(c[r*n+j]) - want); !(d <= tol) {
					t.Fatalf("ssymm %d rows [%d][%d] = %g, want %g", sr, r, j, c[r*n+j], want)
				}
			}
		}
	}
	// upper triangle U: NaN below the diagonal
	up := append([]float32(nil), a...)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			up[i*n+j] = float32(math.NaN())
		}
	}
	u := func(i, j int) float64 {
		if j < i {
			return 0
		}
		return float64(a[i*n+j])
	}
	for _, tU := range []bool{false, true} {
		got := append([]float32(nil), b...)
		StrmmUpperRight(tU, rows, n, 1, up, n, got, n)
		for r := 0; r < rows; r++ {
			for j := 0; j < n; j++ {
				var want float64
				for k := 0; k < n; k++ {
					if tU {
						want += float64(b[r*n+k]) * u(j, k)
					} else {
						want += float64(b[r*n+k]) * u(k, j)
					}
				}
				if d := math.Abs(float64(got[r*n+j]) - want); !(d <= tol) {
					t.Fatalf("strmm(trans=%v) [%d][%d] = %g, want %g", tU, r, j, got[r*n+j], want)
				}
			}
		}
	}
}
