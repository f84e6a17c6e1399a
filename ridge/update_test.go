package ridge

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/flycl/flycl/linalg"
	"github.com/flycl/flycl/projection"
)

// codesData returns n×m codes made the way Fly-CL makes them: random
// features (a class mean plus noise, d = 64) through a sparse random
// projection (p = 16) and signed top-k (k = m/3), so the rows are sparse,
// mostly positive and strongly correlated, like real codes.
func codesData(t *testing.T, seed uint64, n, m, nc int) ([]float32, []int) {
	t.Helper()
	const d, p = 64, 16
	r := rand.New(rand.NewPCG(seed, 7))
	means := make([]float64, nc*d)
	for i := range means {
		means[i] = r.NormFloat64()
	}
	x := make([]float32, n*d)
	labels := make([]int, n)
	for i := 0; i < n; i++ {
		c := r.IntN(nc)
		labels[i] = c
		for j := 0; j < d; j++ {
			x[i*d+j] = float32(math.Abs(means[c*d+j] + 0.5*r.NormFloat64()))
		}
	}
	w, err := projection.Generate(m, d, p, 1)
	if err != nil {
		t.Fatal(err)
	}
	h := make([]float32, n*m)
	if err := w.Apply(context.Background(), projection.Sparse, x, n, h); err != nil {
		t.Fatal(err)
	}
	projection.TopK(h, n, m, m/3, projection.Signed)
	return h, labels
}

// gram64 returns ΣHᵀH + λI over the row blocks hs (n_i×m each) in float64,
// the exact matrix whose factor the float32 code keeps.
func gram64(m int, lambda float64, hs ...[]float32) []float64 {
	a := make([]float64, m*m)
	for _, h := range hs {
		n := len(h) / m
		h64 := make([]float64, len(h))
		for i, v := range h {
			h64[i] = float64(v)
		}
		if n > 0 {
			linalg.Dgemm(true, false, m, m, n, 1, h64, m, h64, m, 1, a, m)
		}
	}
	for i := 0; i < m; i++ {
		a[i*m+i] += lambda
	}
	return a
}

// backward64 returns, in float64, the largest over a few random z of
// ρ(z) = ‖z − Ay‖₂ / (‖d‖₂·dᵀ|y|) (d_i = √A_ii) for y = acc.SolveRows(z),
// the solve with the workspace's factor and low-rank term: the quantity
// DriftTolerance bounds, without the rounding of its float32 evaluation.
// A fresh float32 factor's solve has ρ ≤ γ̃_{3m+1} = 8·√(3m+1)·u, below
// τ/2 (see DriftTolerance).
func backward64(a []float64, acc *Accumulator) float64 {
	m := acc.m
	r := rand.New(rand.NewPCG(99, 1))
	var worst float64
	for probe := 0; probe < 3; probe++ {
		z := make([]float32, m)
		for i := range z {
			z[i] = float32(r.NormFloat64())
		}
		y := append([]float32(nil), z...)
		acc.SolveRows(y, 1)
		var rr, dn, dy float64
		for i := 0; i < m; i++ {
			e := float64(z[i])
			for j := 0; j < m; j++ {
				e -= a[i*m+j] * float64(y[j])
			}
			rr += e * e
			dn += a[i*m+i]
			dy += math.Sqrt(a[i*m+i]) * math.Abs(float64(y[i]))
		}
		worst = max(worst, math.Sqrt(rr)/(math.Sqrt(dn)*dy))
	}
	return worst
}

// solve64 solves A Cᵀ = S in float64 (A from gram64, S classes×m).
func solve64(t *testing.T, a []float64, m int, s []float32, nc int) []float64 {
	t.Helper()
	f := append([]float64(nil), a...)
	if err := linalg.Dpotrf(m, f, m); err != nil {
		t.Fatal(err)
	}
	c := make([]float64, len(s))
	for i, v := range s {
		c[i] = float64(v)
	}
	linalg.Dpotrs(m, nc, f, m, c, m)
	return c
}

// cond64 returns the 2-norm condition number of the symmetric positive
// definite a and its largest eigenvalue.
func cond64(t *testing.T, a []float64, m int) (kappa, top float64) {
	t.Helper()
	e := append([]float64(nil), a...)
	w := make([]float64, m)
	if err := linalg.Dsyevd(false, m, e, m, w); err != nil {
		t.Fatal(err)
	}
	return w[m-1] / w[0], w[m-1]
}

// solveBound returns the first-order bound on the relative error of a
// classifier whose solves have the backward error ρ ≤ τ (DriftTolerance):
// κ(A)·τ·tr(A)/‖A‖₂ (a backward error ‖ΔA‖₂ ≤ τ·tr(A), see DriftTolerance).
func solveBound(t *testing.T, a []float64, m int) float64 {
	t.Helper()
	kappa, top := cond64(t, a, m)
	var tr float64
	for i := 0; i < m; i++ {
		tr += a[i*m+i]
	}
	return kappa * DriftTolerance(m) * tr / top
}

func relDiff(got []float32, want []float64) float64 {
	var d, n float64
	for i, w := range want {
		e := float64(got[i]) - w
		d += e * e
		n += w * w
	}
	return math.Sqrt(d / n)
}

// TestRankUpdateMatchesFloat64 learns a base of samples, factors, then adds
// several small batches through AddUpdating, and checks the updated float32
// factor against the exact matrix in float64: its backward error ρ must be
// within DriftTolerance/4 (the bound of a fresh float32 factorisation
// without the rounding of the check's own float32 products, see
// DriftTolerance), and the classifier solved from it must be within the
// first-order perturbation bound of the float64 solution (solveBound); a
// fresh float32 factor of the same statistics is held to the same bounds.
func TestRankUpdateMatchesFloat64(t *testing.T) {
	type tc struct {
		name       string
		m, n0, n   int
		batches    int
		lambdaFrac float64 // λ as a fraction of G's mean diagonal
		realLike   bool
	}
	cases := []tc{
		{"random/n=1", 200, 40, 1, 5, 1e-2, false},
		{"random/n=7/m=131", 131, 30, 7, 4, 1e-3, false},
		{"random/n=20", 300, 60, 20, 4, 1e-2, false},
		{"codes/n=20", 300, 60, 20, 5, 1e-3, true},
		{"codes/n=3", 257, 20, 3, 6, 1e-2, true},
		{"codes/n=12/m=64", 64, 0, 12, 3, 1e-2, true}, // first update onto λI alone
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const nc = 4
			total := c.n0 + c.n*c.batches
			var h []float32
			var labels []int
			if c.realLike {
				h, labels = codesData(t, 3, total, c.m, nc)
			} else {
				h, labels = classData(3, total, c.m, nc)
			}
			var tr float64
			for _, v := range h {
				tr += float64(v) * float64(v)
			}
			lambda := float64(float32(c.lambdaFrac * tr / float64(c.m)))
			acc, _ := NewAccumulator(c.m)
			acc.SetUpdateLimit(c.n * c.batches) // small m: past the crossover, but the update is what is tested
			acc.GrowClasses(nc)
			if err := acc.Add(h[:c.n0*c.m], c.n0, labels[:c.n0]); err != nil {
				t.Fatal(err)
			}
			if err := acc.Factor(context.Background(), lambda); err != nil {
				t.Fatal(err)
			}
			tol := DriftTolerance(c.m)
			for b := 0; b < c.batches; b++ {
				lo, hi := c.n0+b*c.n, c.n0+(b+1)*c.n
				up, err := acc.AddUpdating(h[lo*c.m:hi*c.m], c.n, labels[lo:hi], lambda)
				if err != nil {
					t.Fatal(err)
				}
				if !up.Updated || acc.FactorLambda() != lambda {
					t.Fatalf("batch %d: factor not updated: %s", b, up.Reason)
				}
				if !(up.Residual <= tol) {
					t.Fatalf("batch %d: drift check %g above %g but reported updated", b, up.Residual, tol)
				}
			}
			a := gram64(c.m, lambda, h)
			rho := backward64(a, acc)
			if !(rho <= tol/2) {
				t.Errorf("updated factor: backward error ρ = %.3g, want ≤ τ/2 = %.3g", rho, tol/2)
			}
			bound := solveBound(t, a, c.m)
			want := solve64(t, a, c.m, acc.S(), nc)
			got := append([]float32(nil), acc.S()...)
			acc.SolveRows(got, nc)
			d := relDiff(got, want)
			if !(d <= bound) {
				t.Errorf("classifier from the updated factor differs from float64 by %.3g, more than its bound %.3g", d, bound)
			}
			// The same statistics factored afresh in float32 meet the same
			// bounds (the bound is not loose for the update alone).
			if err := acc.Factor(context.Background(), lambda); err != nil {
				t.Fatal(err)
			}
			rho0 := backward64(a, acc)
			if !(rho0 <= tol/2) {
				t.Errorf("fresh factor: backward error ρ = %.3g, want ≤ %.3g", rho0, tol/2)
			}
			got0 := append([]float32(nil), acc.S()...)
			acc.SolveRows(got0, nc)
			if d0, b0 := relDiff(got0, want), solveBound(t, a, c.m); !(d0 <= b0) {
				t.Errorf("classifier from a fresh factor differs from float64 by %.3g, more than its bound %.3g", d0, b0)
			}
			t.Logf("ρ updated %.3g, fresh %.3g (τ/2 %.3g); classifier error updated %.3g, fresh %.3g (bound %.3g)", rho, rho0, tol/2, d, relDiff(got0, want), bound)
		})
	}
}

// TestRankDowndateMatchesFloat64 adds batches, then removes some through
// SubDowndating, and compares with the exact float64 matrix of what is
// left: backward error within τ/2 and classifier within solveBound.
func TestRankDowndateMatchesFloat64(t *testing.T) {
	for _, realLike := range []bool{false, true} {
		name := map[bool]string{false: "random", true: "codes"}[realLike]
		t.Run(name, func(t *testing.T) {
			const m, n0, n, nc = 240, 80, 10, 3
			var h []float32
			var labels []int
			if realLike {
				h, labels = codesData(t, 5, n0+2*n, m, nc)
			} else {
				h, labels = classData(5, n0+2*n, m, nc)
			}
			var tr float64
			for _, v := range h {
				tr += float64(v) * float64(v)
			}
			lambda := float64(float32(1e-2 * tr / m))
			acc, _ := NewAccumulator(m)
			acc.SetUpdateLimit(2 * n)
			if err := acc.Add(h, n0+2*n, labels); err != nil {
				t.Fatal(err)
			}
			if err := acc.Factor(context.Background(), lambda); err != nil {
				t.Fatal(err)
			}
			tol := DriftTolerance(m)
			for b := 1; b >= 0; b-- {
				lo, hi := n0+b*n, n0+(b+1)*n
				up, err := acc.SubDowndating(h[lo*m:hi*m], n, labels[lo:hi], lambda)
				if err != nil {
					t.Fatal(err)
				}
				if !up.Updated {
					t.Fatalf("downdate %d: factor not kept: %s", b, up.Reason)
				}
			}
			a := gram64(m, lambda, h[:n0*m])
			if rho := backward64(a, acc); !(rho <= tol/2) {
				t.Errorf("downdated factor: backward error ρ = %.3g, want ≤ %.3g", rho, tol/2)
			}
			want := solve64(t, a, m, acc.S(), acc.Classes())
			got := append([]float32(nil), acc.S()...)
			acc.SolveRows(got, acc.Classes())
			if d, bound := relDiff(got, want), solveBound(t, a, m); !(d <= bound) {
				t.Errorf("classifier after downdate differs from float64 by %.3g, bound %.3g", d, bound)
			}
		})
	}
}

// TestDowndateLosingDefinitenessFallsBack removes a sample that G never
// held (three times one that it did): G − hᵀh + λI is then indefinite for a
// small λ, the downdate must refuse, and the factor must be invalid so the
// next solve refactors; the statistics are Sub's either way.
func TestDowndateLosingDefinitenessFallsBack(t *testing.T) {
	const m, n0 = 50, 20
	h, labels := classData(9, n0, m, 2)
	acc, _ := NewAccumulator(m)
	if err := acc.Add(h, n0, labels); err != nil {
		t.Fatal(err)
	}
	if err := acc.Factor(context.Background(), 1e-3); err != nil {
		t.Fatal(err)
	}
	bad := make([]float32, m)
	for j := range bad {
		bad[j] = 3 * h[j]
	}
	want := float64(acc.G(0, 0)) - float64(bad[0])*float64(bad[0])
	up, err := acc.SubDowndating(bad, 1, labels[:1], 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	if up.Updated || acc.FactorLambda() != 0 {
		t.Fatalf("indefinite downdate kept the factor (reason %q)", up.Reason)
	}
	if !strings.Contains(up.Reason, ErrDowndate.Error()) {
		t.Errorf("reason %q does not name the downdate's failure", up.Reason)
	}
	if got := float64(acc.G(0, 0)); math.Abs(got-max(want, 0)) > 1e-4*math.Abs(float64(bad[0]*bad[0])) {
		t.Errorf("G[0][0] = %g after the refused downdate, want Sub's %g", got, max(want, 0))
	}
	var npd *linalg.NotPositiveDefiniteError
	if err := acc.Factor(context.Background(), 1e-3); err != nil && !errors.As(err, &npd) {
		t.Fatalf("refactor: %v", err)
	}
}

// TestDriftCheckTriggers scales a fresh factor U by 1+ε: then UᵀU − A =
// (2ε+ε²)A, and for any z, ‖Az‖ ≥ λ‖z‖ while ‖d‖₂·dᵀ|z| ≤ tr(A)·‖z‖
// (Cauchy–Schwarz), so ρ ≥ 2ε·λ/tr(A). With ε = τ·tr(A)/λ the check must
// see ρ ≥ 2τ (less its float32 rounding, at most τ): FactorResidual must
// exceed τ = DriftTolerance and AddUpdating must refuse to keep the
// factor, while the fresh factor passes (ρ ≤ τ).
func TestDriftCheckTriggers(t *testing.T) {
	for _, m := range []int{100, 400} {
		h, labels := codesData(t, 11, 60, m, 3)
		acc, _ := NewAccumulator(m)
		acc.SetUpdateLimit(10)
		if err := acc.Add(h[:50*m], 50, labels[:50]); err != nil {
			t.Fatal(err)
		}
		lambda := float64(acc.G(0, 0)+acc.G(1, 1)) / 20
		if err := acc.Factor(context.Background(), lambda); err != nil {
			t.Fatal(err)
		}
		tol := DriftTolerance(m)
		if rho := acc.FactorResidual(driftProbes, 1); !(rho <= tol) {
			t.Fatalf("m=%d: fresh factor ρ = %.3g above τ = %.3g", m, rho, tol)
		}
		var trA float64
		for i := 0; i < m; i++ {
			trA += float64(acc.G(i, i)) + lambda
		}
		eps := tol * trA / lambda
		for i := 0; i < m; i++ {
			for j := i; j < m; j++ {
				acc.buf[i*m+j] *= float32(1 + eps)
			}
		}
		if rho := acc.FactorResidual(driftProbes, 1); !(rho > tol) {
			t.Fatalf("m=%d: factor scaled by 1+%.3g: ρ = %.3g not above τ = %.3g", m, eps, rho, tol)
		}
		up, err := acc.AddUpdating(h[50*m:], 10, labels[50:], lambda)
		if err != nil {
			t.Fatal(err)
		}
		if up.Updated || acc.FactorLambda() != 0 || !strings.Contains(up.Reason, "drift") {
			t.Fatalf("m=%d: drifted factor kept (updated %v, reason %q)", m, up.Updated, up.Reason)
		}
	}
}

// TestFactorState checks when the workspace's factor counts as valid:
// Factor sets it, every other change of G clears it, AddUpdating keeps it
// only for the same λ and few enough samples.
func TestFactorState(t *testing.T) {
	const m = 60
	h, labels := classData(2, 40, m, 2)
	ctx := context.Background()
	acc, _ := NewAccumulator(m)
	if acc.FactorLambda() != 0 {
		t.Fatal("new accumulator claims a factor")
	}
	acc.Add(h[:20*m], 20, labels[:20])
	acc.Factor(ctx, 5)
	if acc.FactorLambda() != 5 {
		t.Fatalf("FactorLambda = %g after Factor(5)", acc.FactorLambda())
	}
	if up, _ := acc.AddUpdating(h[20*m:21*m], 1, labels[20:21], 6); up.Updated || acc.FactorLambda() != 0 {
		t.Fatalf("update kept the factor for another λ (%q)", up.Reason)
	}
	acc.Factor(ctx, 5)
	if up, _ := acc.AddUpdating(h[21*m:21*m+m*(UpdateLimit(m)+1)], UpdateLimit(m)+1, labels[21:22+UpdateLimit(m)], 5); up.Updated {
		t.Fatalf("update kept the factor beyond UpdateLimit (%q)", up.Reason)
	}
	for name, change := range map[string]func(){
		"Add":            func() { acc.Add(h[:m], 1, labels[:1]) },
		"Sub":            func() { acc.Sub(h[:m], 1, labels[:1]) },
		"SetLowerRow":    func() { acc.SetLowerRow(3, acc.LowerRow(3)) },
		"SetPackedLower": func() { acc.SetPackedLower(acc.PackedLower()) },
	} {
		acc.Factor(ctx, 5)
		change()
		if acc.FactorLambda() != 0 {
			t.Errorf("%s left the factor valid", name)
		}
	}
}

// TestDriftCheckEveryUpdate: every update checks the solves in the
// directions of its own samples, so a factor that went wrong between two
// learns (scaled as in TestDriftCheckTriggers after the first update) is
// caught at the very next one, not at the next scheduled random-probe
// check; updates before it are kept and report the check they passed.
func TestDriftCheckEveryUpdate(t *testing.T) {
	const m, n = 120, 2
	h, labels := codesData(t, 13, 40+n*3, m, 3)
	acc, _ := NewAccumulator(m)
	acc.SetUpdateLimit(n * 3)
	acc.Add(h[:40*m], 40, labels[:40])
	lambda := float64(acc.G(0, 0)+acc.G(1, 1)) / 20
	if err := acc.Factor(context.Background(), lambda); err != nil {
		t.Fatal(err)
	}
	tol := DriftTolerance(m)
	for u := 1; u <= 3; u++ {
		lo := 40 + (u-1)*n
		if u == 3 {
			var trA float64
			for i := 0; i < m; i++ {
				trA += float64(acc.G(i, i)) + lambda
			}
			for i := 0; i < m; i++ {
				for j := i; j < m; j++ {
					acc.buf[i*m+j] *= float32(1 + tol*trA/lambda)
				}
			}
		}
		up, err := acc.AddUpdating(h[lo*m:(lo+n)*m], n, labels[lo:lo+n], lambda)
		if err != nil {
			t.Fatal(err)
		}
		if !(up.Tolerance > 0) {
			t.Fatalf("update %d: no check ran", u)
		}
		if want := u < 3; up.Updated != want {
			t.Fatalf("update %d: kept %v, want %v (residual %.3g, %s)", u, up.Updated, want, up.Residual, up.Reason)
		}
	}
}
