package linalg

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
	gblas "gonum.org/v1/gonum/blas/gonum"
	glapack "gonum.org/v1/gonum/lapack/gonum"
)

// Tests of the blocked routines at sizes that cross their blocks (the
// pure-Go build's syrk strips of 64 rows and 192 columns, Cholesky blocks
// of 96) with leading dimensions larger than the order; they run against
// OpenBLAS in the cgo build too. The bounds are the classical rounding
// error bounds of float32 arithmetic (u = 2⁻²⁴, γ_k = k·u/(1−k·u); Higham,
// Accuracy and Stability of Numerical Algorithms, 2nd ed.):
//
//   - syrk, an inner product of length k (Thm 3.5 / eq. 3.5):
//     |ΔC_ij| ≤ γ_{k+2}·(|α|·(|op A|ᵀ|op A|)_ij + |β|·|C_ij|);
//   - Cholesky (Thm 10.3): UᵀU = A + ΔA with |ΔA| ≤ γ_{n+1}·|Uᵀ||U|;
//   - solve (Thm 10.4): (A + ΔA)x = b with |ΔA| ≤ γ_{3n+1}·|Uᵀ||U|, so
//     |b − A x| ≤ γ_{3n+1}·|Uᵀ||U||x|;
//   - the factor itself against gonum's float64 Dpotrf (first-order
//     perturbation of the Cholesky factor, Sun 1991): ‖U − U₆₄‖_F ≤
//     κ₂(A)·‖ΔA‖_F/‖A‖₂·‖U‖₂, with κ₂(A) ≤ (trace XᵀX + λ)/λ for the test
//     matrices A = XᵀX + λI; a factor 2 covers the second-order terms.
//
// The residuals are evaluated in float64 from the float32 values, whose
// own rounding (about n·2⁻⁵³) is negligible next to these bounds.

const u32 = 1.0 / (1 << 24)

func gamma32(k int) float64 { return float64(k) * u32 / (1 - float64(k)*u32) }

// ridgeGram returns X (rows×n, normal entries) and A = XᵀX + λI.
func ridgeGram(r *rand.Rand, rows, n int, lambda float64) (x, a []float64) {
	x = randMat(r, rows, n)
	a = naiveGemm(true, false, n, n, rows, x, n, x, n)
	for i := 0; i < n; i++ {
		a[i*n+i] += lambda
	}
	return x, a
}

// padded copies the n×n a into a row-major slice of leading dimension ld,
// with NaN outside the upper triangle (it must be neither read nor written
// by the upper-triangle routines).
func padded(n, ld int, a []float64, upper bool) []float32 {
	p := make([]float32, (n-1)*ld+n)
	for i := range p {
		p[i] = float32(math.NaN())
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if (upper && j >= i) || (!upper && j <= i) {
				p[i*ld+j] = float32(a[i*n+j])
			}
		}
	}
	return p
}

func TestSyrkBlocked(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	for _, tc := range []struct {
		upper, tA bool
		n, k, ld  int
	}{
		{true, true, 200, 37, 203}, {false, true, 200, 37, 200}, {true, false, 257, 70, 260},
		{false, false, 130, 5, 131}, {true, true, 65, 300, 65}, {false, true, 450, 96, 451},
	} {
		t.Run(fmt.Sprintf("upper=%v/tA=%v/n=%d/k=%d", tc.upper, tc.tA, tc.n, tc.k), func(t *testing.T) {
			ar, ac := tc.n, tc.k
			if tc.tA {
				ar, ac = tc.k, tc.n
			}
			a := randMat(r, ar, ac)
			a32 := to32(a)
			c0 := randMat(r, tc.n, tc.n)
			c := padded(tc.n, tc.ld, c0, tc.upper)
			const alpha, beta = -0.75, 0.5
			if tc.upper {
				Ssyrk(tc.tA, tc.n, tc.k, alpha, a32, ac, beta, c, tc.ld)
			} else {
				SsyrkLower(tc.tA, tc.n, tc.k, alpha, a32, ac, beta, c, tc.ld)
			}
			at32 := func(i, l int) float64 { // op(A)ᵀ[i, l] as float32 input
				if tc.tA {
					return float64(a32[l*ac+i])
				}
				return float64(a32[i*ac+l])
			}
			g := gamma32(tc.k + 2)
			for i := 0; i < tc.n; i++ {
				for j := 0; j < tc.n; j++ {
					got := c[i*tc.ld+j]
					if (tc.upper && j < i) || (!tc.upper && j > i) {
						if !math.IsNaN(float64(got)) {
							t.Fatalf("(%d,%d) outside the triangle written: %g", i, j, got)
						}
						continue
					}
					var s, abs float64
					for l := 0; l < tc.k; l++ {
						p := at32(i, l) * at32(j, l)
						s += p
						abs += math.Abs(p)
					}
					cin := float64(float32(c0[i*tc.n+j]))
					want := alpha*s + beta*cin
					bound := g * (math.Abs(alpha)*abs + math.Abs(beta*cin))
					if d := math.Abs(float64(got) - want); !(d <= bound) {
						t.Fatalf("(%d,%d): %g want %g (error %.3g > bound %.3g)", i, j, got, want, d, bound)
					}
				}
			}
		})
	}
}

func TestCholeskyBlocked(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 12))
	for _, tc := range []struct {
		n, ld, rows, nrhs int
		lambda            float64
	}{
		{1, 1, 3, 1, 1}, {95, 95, 50, 2, 1}, {96, 100, 200, 1, 10}, {97, 97, 30, 5, 0.5},
		{193, 200, 120, 3, 2}, {300, 301, 400, 7, 30},
	} {
		t.Run(fmt.Sprintf("n=%d/lambda=%g", tc.n, tc.lambda), func(t *testing.T) {
			n := tc.n
			_, a := ridgeGram(r, tc.rows, n, tc.lambda)
			a32 := to32(a) // the input both factorisations see
			f := padded(n, tc.ld, a, true)
			if err := Spotrf(n, f, tc.ld); err != nil {
				t.Fatal(err)
			}
			uabs := func(i, j int) float64 { return math.Abs(float64(f[i*tc.ld+j])) }
			u := func(i, j int) float64 { return float64(f[i*tc.ld+j]) }
			// Backward error, element by element, and the lower triangle untouched.
			var dA2, trace, maxDiag, absProdF, uF2 float64
			for i := 0; i < n; i++ {
				trace += float64(a32[i*n+i])
				maxDiag = math.Max(maxDiag, float64(a32[i*n+i]))
				for j := 0; j < n; j++ {
					if j < i {
						if !math.IsNaN(float64(f[i*tc.ld+j])) {
							t.Fatalf("lower triangle (%d,%d) written", i, j)
						}
						continue
					}
					uF2 += u(i, j) * u(i, j)
					var s, abs float64
					for l := 0; l <= i; l++ {
						s += u(l, i) * u(l, j)
						abs += uabs(l, i) * uabs(l, j)
					}
					d := s - float64(a32[i*n+j])
					if !(math.Abs(d) <= gamma32(n+1)*abs) {
						t.Fatalf("(UᵀU−A)[%d,%d] = %.3g > γ_{n+1}(|Uᵀ||U|) = %.3g", i, j, d, gamma32(n+1)*abs)
					}
					w := 1.0
					if i != j {
						w = 2 // the lower triangle's copy in the Frobenius norm
					}
					dA2 += w * d * d
					absProdF += w * abs * abs
				}
			}
			// Forward error against gonum's float64 factorisation of the same input.
			ref := make([]float64, n*n)
			for i := range ref {
				ref[i] = float64(a32[i])
			}
			if !(glapack.Implementation{}).Dpotrf(blas.Upper, n, ref, n) {
				t.Fatal("gonum Dpotrf failed")
			}
			var diff2 float64
			for i := 0; i < n; i++ {
				for j := i; j < n; j++ {
					d := u(i, j) - ref[i*n+j]
					diff2 += d * d
				}
			}
			kappa := (trace - float64(n)*tc.lambda + tc.lambda) / tc.lambda
			// ‖A‖₂ ≥ max diag, ‖U‖₂ = √‖A‖₂ ≤ √trace; ‖ΔA‖_F ≤ γ_{n+1}‖|Uᵀ||U|‖_F.
			bound := 2 * kappa * gamma32(n+1) * math.Sqrt(absProdF) / maxDiag * math.Sqrt(trace)
			if d := math.Sqrt(diff2); !(d <= bound) {
				t.Fatalf("‖U − U₆₄‖_F = %.3g > %.3g (κ ≤ %.3g)", d, bound, kappa)
			}

			// Solve: the residual bound of Thm 10.4.
			b := to32(randMat(r, tc.nrhs, n))
			x := append([]float32(nil), b...)
			Spotrs(n, tc.nrhs, f, tc.ld, x, n)
			for q := 0; q < tc.nrhs; q++ {
				xq := x[q*n : (q+1)*n]
				// |Uᵀ||U||x|
				ux := make([]float64, n)
				for i := 0; i < n; i++ {
					for j := i; j < n; j++ {
						ux[i] += uabs(i, j) * math.Abs(float64(xq[j]))
					}
				}
				for i := 0; i < n; i++ {
					var res, bnd float64
					for l := 0; l <= i; l++ {
						bnd += uabs(l, i) * ux[l]
					}
					for j := 0; j < n; j++ {
						res += float64(a32[i*n+j]) * float64(xq[j])
					}
					res = float64(b[q*n+i]) - res
					if !(math.Abs(res) <= gamma32(3*n+1)*bnd) {
						t.Fatalf("rhs %d: |b − A x|[%d] = %.3g > γ_{3n+1}(|Uᵀ||U||x|) = %.3g", q, i, res, gamma32(3*n+1)*bnd)
					}
				}
			}
		})
	}
}

func TestCholeskyBlockedFloat64(t *testing.T) {
	// Dsyrk/Dpotrf share the blocked code; check them against gonum's own
	// float64 routines at sizes crossing the blocks, with the bounds above
	// in float64 (u₆₄ = 2⁻⁵³).
	r := rand.New(rand.NewPCG(13, 13))
	const n, rows, lambda = 230, 300, 3.0
	const u64 = 0x1p-53
	x, _ := ridgeGram(r, rows, n, lambda)
	xabs := make([]float64, len(x))
	for i, v := range x {
		xabs[i] = math.Abs(v)
	}
	absGram := naiveGemm(true, false, n, n, rows, xabs, n, xabs, n)
	g := make([]float64, n*n)
	Dsyrk(true, n, rows, 1, x, n, 0, g, n)
	ref := make([]float64, n*n)
	(gblas.Implementation{}).Dsyrk(blas.Upper, blas.Trans, n, rows, 1, x, n, 0, ref, n)
	var trace float64
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			// Both are within γ_{rows}|X|ᵀ|X| of the exact value.
			if d := math.Abs(g[i*n+j] - ref[i*n+j]); !(d <= 2*float64(rows+2)*u64*absGram[i*n+j]) {
				t.Fatalf("Dsyrk (%d,%d): %g, gonum %g", i, j, g[i*n+j], ref[i*n+j])
			}
		}
		g[i*n+i] += lambda
		trace += g[i*n+i]
	}
	f := append([]float64(nil), g...)
	if err := Dpotrf(n, f, n); err != nil {
		t.Fatal(err)
	}
	r64 := append([]float64(nil), g...)
	if !(glapack.Implementation{}).Dpotrf(blas.Upper, n, r64, n) {
		t.Fatal("gonum Dpotrf failed")
	}
	// Both factors are within the first-order bound of the exact one:
	// ‖ΔU‖_F ≤ κ·γ_{n+1}‖|Uᵀ||U|‖_F/‖A‖₂·‖U‖₂ ≤ κ·γ_{n+1}·n·√trace, since
	// ‖|Uᵀ||U|‖_F ≤ ‖U‖_F² = trace ≤ n‖A‖₂.
	kappa := (trace - n*lambda + lambda) / lambda
	bound := 2 * 2 * kappa * float64(n+1) * u64 * float64(n) * math.Sqrt(trace)
	var diff2 float64
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			d := f[i*n+j] - r64[i*n+j]
			diff2 += d * d
		}
	}
	if d := math.Sqrt(diff2); !(d <= bound) {
		t.Fatalf("Dpotrf: ‖U − U_gonum‖_F = %.3g > %.3g", d, bound)
	}
}

func TestPotrfOrderAcrossBlocks(t *testing.T) {
	// A = I with A[q−1,q−1] = 0 (or NaN): the leading minors of order < q
	// are positive definite, the one of order q is not.
	const n = 300
	for _, q := range []int{1, 50, 96, 97, 192, 193, 300} {
		for _, bad := range []float32{0, -1, float32(math.NaN())} {
			if bad != bad && Backend() != "gonum" {
				continue // OpenBLAS's spotrf lets a NaN pivot through (nil error)
			}
			a := make([]float32, n*n)
			for i := 0; i < n; i++ {
				a[i*n+i] = 1
			}
			a[(q-1)*n+q-1] = bad
			var e *NotPositiveDefiniteError
			if err := Spotrf(n, a, n); !errors.As(err, &e) || e.Order != q {
				t.Fatalf("q=%d bad=%g: got %v, want NotPositiveDefiniteError{%d}", q, bad, err, q)
			}
		}
	}
}

func TestCholeskyBlockedOneThread(t *testing.T) {
	// The same factor whatever the number of CPUs: every element is
	// computed by the same sequence of operations, only the order of the
	// tiles differs.
	r := rand.New(rand.NewPCG(14, 14))
	_, a := ridgeGram(r, 200, 250, 5)
	f1, f2 := to32(a), to32(a)
	prev := runtime.GOMAXPROCS(1)
	err1 := Spotrf(250, f1, 250)
	runtime.GOMAXPROCS(max(prev, 2))
	err2 := Spotrf(250, f2, 250)
	runtime.GOMAXPROCS(prev)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if Backend() != "gonum" {
		t.Skip("bit-identity across thread counts is a property of the pure-Go build (OpenBLAS may split its kernels differently)")
	}
	for i := range f1 {
		if f1[i] != f2[i] && !(math.IsNaN(float64(f1[i])) && math.IsNaN(float64(f2[i]))) {
			t.Fatalf("element %d: %g with 1 CPU, %g with %d", i, f1[i], f2[i], max(prev, 2))
		}
	}
}
