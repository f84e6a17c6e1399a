package linalg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The reference for every routine is a naive float64 loop. float32 results
// are compared with a relative tolerance of 1e-4 of the matrix scale: the
// sums have at most a few hundred terms, each rounding at 6e-8.

func randMat(r *rand.Rand, rows, cols int) []float64 {
	a := make([]float64, rows*cols)
	for i := range a {
		a[i] = r.NormFloat64()
	}
	return a
}

func to32(a []float64) []float32 {
	b := make([]float32, len(a))
	for i, v := range a {
		b[i] = float32(v)
	}
	return b
}

func at(a []float64, ld int, t bool, i, j int) float64 {
	if t {
		return a[j*ld+i]
	}
	return a[i*ld+j]
}

func naiveGemm(tA, tB bool, m, n, k int, a []float64, lda int, b []float64, ldb int) []float64 {
	c := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for l := 0; l < k; l++ {
				s += at(a, lda, tA, i, l) * at(b, ldb, tB, l, j)
			}
			c[i*n+j] = s
		}
	}
	return c
}

func maxAbs(a []float64) float64 {
	var m float64
	for _, v := range a {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

func TestGemm(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct {
		tA, tB  bool
		m, n, k int
	}{
		{false, false, 7, 5, 3}, {true, false, 4, 9, 6}, {false, true, 8, 3, 5}, {true, true, 5, 5, 11}, {false, false, 1, 1, 1},
	} {
		ar, ac := tc.m, tc.k
		if tc.tA {
			ar, ac = tc.k, tc.m
		}
		br, bc := tc.k, tc.n
		if tc.tB {
			br, bc = tc.n, tc.k
		}
		a, b := randMat(r, ar, ac), randMat(r, br, bc)
		c0 := randMat(r, tc.m, tc.n)
		want := naiveGemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, a, ac, b, bc)
		for i := range want {
			want[i] = 2*want[i] + 0.5*c0[i]
		}
		c := to32(c0)
		Sgemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, 2, to32(a), ac, to32(b), bc, 0.5, c, tc.n)
		cd := append([]float64(nil), c0...)
		Dgemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, 2, a, ac, b, bc, 0.5, cd, tc.n)
		for i := range want {
			if math.Abs(float64(c[i])-want[i]) > 1e-4*(1+maxAbs(want)) {
				t.Fatalf("Sgemm%+v: c[%d]=%g want %g", tc, i, c[i], want[i])
			}
			if math.Abs(cd[i]-want[i]) > 1e-12*(1+maxAbs(want)) {
				t.Fatalf("Dgemm%+v: c[%d]=%g want %g", tc, i, cd[i], want[i])
			}
		}
	}
}

func TestSyrk(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, tc := range []struct {
		tA   bool
		n, k int
	}{{false, 6, 4}, {true, 6, 4}, {true, 9, 13}, {false, 1, 3}} {
		ar, ac := tc.n, tc.k
		if tc.tA {
			ar, ac = tc.k, tc.n
		}
		a := randMat(r, ar, ac)
		want := naiveGemm(tc.tA, !tc.tA, tc.n, tc.n, tc.k, a, ac, a, ac)
		up, lo := make([]float32, tc.n*tc.n), make([]float32, tc.n*tc.n)
		for i := range up {
			up[i], lo[i] = 7, 7 // beta = 1: the existing values are added
		}
		Ssyrk(tc.tA, tc.n, tc.k, 1, to32(a), ac, 1, up, tc.n)
		SsyrkLower(tc.tA, tc.n, tc.k, 1, to32(a), ac, 1, lo, tc.n)
		ud := make([]float64, tc.n*tc.n)
		Dsyrk(tc.tA, tc.n, tc.k, 1, a, ac, 0, ud, tc.n)
		for i := 0; i < tc.n; i++ {
			for j := 0; j < tc.n; j++ {
				w := want[i*tc.n+j]
				if j >= i {
					if math.Abs(float64(up[i*tc.n+j])-7-w) > 1e-4*(1+math.Abs(w)) || math.Abs(ud[i*tc.n+j]-w) > 1e-12*(1+math.Abs(w)) {
						t.Fatalf("Ssyrk%+v (%d,%d): %g / %g want %g", tc, i, j, up[i*tc.n+j]-7, ud[i*tc.n+j], w)
					}
				} else if up[i*tc.n+j] != 7 {
					t.Fatalf("Ssyrk%+v wrote the lower triangle", tc)
				}
				if j <= i {
					if math.Abs(float64(lo[i*tc.n+j])-7-w) > 1e-4*(1+math.Abs(w)) {
						t.Fatalf("SsyrkLower%+v (%d,%d): %g want %g", tc, i, j, lo[i*tc.n+j]-7, w)
					}
				} else if lo[i*tc.n+j] != 7 {
					t.Fatalf("SsyrkLower%+v wrote the upper triangle", tc)
				}
			}
		}
	}
}

// spd returns a well-conditioned symmetric positive definite matrix.
func spd(r *rand.Rand, n int) []float64 {
	b := randMat(r, n, n)
	a := naiveGemm(false, true, n, n, n, b, n, b, n)
	for i := 0; i < n; i++ {
		a[i*n+i] += float64(n)
	}
	return a
}

func TestCholeskySolveInverse(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, n := range []int{1, 2, 5, 17, 64} {
		a := spd(r, n)
		const nrhs = 3
		x := randMat(r, nrhs, n) // true solutions, one per row
		b := naiveGemm(false, false, nrhs, n, n, x, n, a, n)

		// float64
		f := append([]float64(nil), a...)
		for i := 0; i < n; i++ { // poison the lower triangle: must not be read
			for j := 0; j < i; j++ {
				f[i*n+j] = math.NaN()
			}
		}
		if err := Dpotrf(n, f, n); err != nil {
			t.Fatal(err)
		}
		// Uᵀ U == a
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				var s float64
				for l := 0; l <= i; l++ {
					s += f[l*n+i] * f[l*n+j]
				}
				if math.Abs(s-a[i*n+j]) > 1e-10*float64(n) {
					t.Fatalf("n=%d: (UᵀU)[%d,%d]=%g want %g", n, i, j, s, a[i*n+j])
				}
			}
		}
		bd := append([]float64(nil), b...)
		Dpotrs(n, nrhs, f, n, bd, n)
		for i := range x {
			if math.Abs(bd[i]-x[i]) > 1e-9 {
				t.Fatalf("Dpotrs n=%d: x[%d]=%g want %g", n, i, bd[i], x[i])
			}
		}
		if err := Dtrtri(n, f, n); err != nil {
			t.Fatal(err)
		}

		// float32
		f32 := to32(a)
		if err := Spotrf(n, f32, n); err != nil {
			t.Fatal(err)
		}
		b32 := to32(b)
		Spotrs(n, nrhs, f32, n, b32, n)
		for i := range x {
			if math.Abs(float64(b32[i])-x[i]) > 1e-3 {
				t.Fatalf("Spotrs n=%d: x[%d]=%g want %g", n, i, b32[i], x[i])
			}
		}
		u := append([]float32(nil), f32...)
		if err := Strtri(n, f32, n); err != nil {
			t.Fatal(err)
		}
		// U * U⁻¹ == I on the upper triangle
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				var s float64
				for l := i; l <= j; l++ {
					s += float64(u[i*n+l]) * float64(f32[l*n+j])
				}
				want := 0.0
				if i == j {
					want = 1
				}
				if math.Abs(s-want) > 1e-4 {
					t.Fatalf("Strtri n=%d: (U U⁻¹)[%d,%d]=%g", n, i, j, s)
				}
			}
		}
	}
}

func TestPotrfNotPositiveDefinite(t *testing.T) {
	a := []float32{1, 2, 0, 1} // [[1,2],[2,1]] has eigenvalue -1
	err := Spotrf(2, a, 2)
	if e, ok := err.(*NotPositiveDefiniteError); !ok || e.Order != 2 {
		t.Fatalf("got %v, want NotPositiveDefiniteError{2}", err)
	}
}

func TestSyevd(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{1, 3, 20} {
		a := randMat(r, n, n)
		for i := 0; i < n; i++ {
			for j := 0; j < i; j++ {
				a[i*n+j] = a[j*n+i]
			}
		}
		v := append([]float64(nil), a...)
		w := make([]float64, n)
		if err := Dsyevd(true, n, v, n, w); err != nil {
			t.Fatal(err)
		}
		v32, w32 := to32(a), make([]float32, n)
		if err := Ssyevd(false, n, v32, n, w32); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if i > 0 && w[i] < w[i-1] {
				t.Fatalf("eigenvalues not ascending: %v", w)
			}
			if math.Abs(float64(w32[i])-w[i]) > 1e-4*(1+math.Abs(w[i])) {
				t.Fatalf("Ssyevd eigenvalue %d: %g want %g", i, w32[i], w[i])
			}
			// a v_i == w_i v_i
			for j := 0; j < n; j++ {
				var s float64
				for l := 0; l < n; l++ {
					s += a[j*n+l] * v[i*n+l]
				}
				if math.Abs(s-w[i]*v[i*n+j]) > 1e-10*float64(n) {
					t.Fatalf("n=%d eigenpair %d residual %g", n, i, s-w[i]*v[i*n+j])
				}
			}
		}
	}
}

func TestBadDimensionsPanic(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("short slice did not panic")
		}
	}()
	Sgemm(false, false, 3, 3, 3, 1, make([]float32, 8), 3, make([]float32, 9), 3, 0, make([]float32, 9), 3)
}
