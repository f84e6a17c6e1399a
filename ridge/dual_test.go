package ridge

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// dualCodes returns n×m codes with k non-negative non-zeros per row
// (as top-k codes are) and labels in [0,nc).
func dualCodes(seed uint64, n, m, k, nc int) ([]float32, []int) {
	r := rand.New(rand.NewPCG(seed, 7))
	h := make([]float32, n*m)
	labels := make([]int, n)
	for i := range n {
		for _, j := range r.Perm(m)[:k] {
			h[i*m+j] = float32(r.Float64() + 0.1)
		}
		labels[i] = i % nc
	}
	return h, labels
}

// primalRef solves (HᵀH + λI) W = HᵀY in float64 by gonum (an
// independent truth: LU of the m×m system), returning classes × m.
func primalRef(h []float32, n, m int, labels []int, nc int, lambda float64) []float64 {
	H := mat.NewDense(n, m, nil)
	for i := range n {
		for j := range m {
			H.Set(i, j, float64(h[i*m+j]))
		}
	}
	var g mat.Dense
	g.Mul(H.T(), H)
	for i := range m {
		g.Set(i, i, g.At(i, i)+lambda)
	}
	Y := mat.NewDense(n, nc, nil)
	for i, l := range labels {
		Y.Set(i, l, 1)
	}
	var s, w mat.Dense
	s.Mul(H.T(), Y)
	if err := w.Solve(&g, &s); err != nil {
		panic(err)
	}
	out := make([]float64, nc*m)
	for c := range nc {
		for j := range m {
			out[c*m+j] = w.At(j, c)
		}
	}
	return out
}

func TestDualSolveEqualsPrimal(t *testing.T) {
	const n, m, k, nc = 15, 120, 36, 3
	h, labels := dualCodes(1, n, m, k, nc)
	d, _ := NewDual(m)
	if err := d.Add(h, n, labels); err != nil {
		t.Fatal(err)
	}
	for _, lambda := range []float64{1e-3, 1, 100} {
		sol, err := d.Solve(context.Background(), lambda)
		if err != nil {
			t.Fatal(err)
		}
		got, want := sol.Coef(), primalRef(h, n, m, labels, nc, lambda)
		// Both are float64 solves of systems whose condition is at most
		// (λmax+λ)/λ ≤ 1e6 here: their difference is bounded by about
		// cond·1e-16 ≈ 1e-10 relative, plus W's rounding to float32 (6e-8).
		if e := relErr(got, want); e > 1e-6 {
			t.Errorf("λ=%g: dual W differs from the primal by %.3g relative", lambda, e)
		}
		// leverages: hat[i][i] = hᵢᵀ(G+λI)⁻¹hᵢ, computed from the primal W's
		// system independently for a one-column target eᵢ.
		rows := []int{0, 4, 9}
		hat := sol.Hat(rows, rows)
		for p, i := range rows {
			y := make([]int, n)
			for q := range y {
				y[q] = 1 // class 1 for all except i
			}
			y[i] = 0
			wi := primalRef(h, n, m, y, 2, lambda)[:m] // column for class 0: only sample i
			var lev float64
			for j := range m {
				lev += float64(h[i*m+j]) * wi[j]
			}
			if math.Abs(hat[p*len(rows)+p]-lev) > 1e-8 {
				t.Errorf("λ=%g: leverage of %d = %g, primal %g", lambda, i, hat[p*len(rows)+p], lev)
			}
		}
	}
}

func TestDualGCVIsTheSameCurve(t *testing.T) {
	const n, m, k, nc = 20, 150, 45, 4
	h, labels := dualCodes(2, n, m, k, nc)
	d, _ := NewDual(m)
	if err := d.Add(h, n, labels); err != nil {
		t.Fatal(err)
	}
	sp, err := d.Spectrum()
	if err != nil {
		t.Fatal(err)
	}
	grid := []float64{0.01, 0.1, 1, 10, 100, 1000}
	got, _ := sp.Scores(context.Background(), grid)
	want, err := GCV(context.Background(), h, n, m, labels, nc, grid, GCVPrimal)
	if err != nil {
		t.Fatal(err)
	}
	// The spectrum's terms are sums of positive numbers (float64: ~n·2⁻⁵³
	// relative). The primal float64 GCV (n < m) forms 1 − df/n as
	// (n − m + λ·tr(G + λI)⁻¹)/n, a difference of numbers of size m
	// whose result at λ = 0.01 is about 1e-4 here: its float64 rounding,
	// m·2⁻⁵³ of m, leaves ~150·1.1e-16/1e-4 ≈ 2e-10 relative, doubled by
	// the square; 1e-8 bounds it with room for the solve's rounding.
	if e := relErr64(got, want); e > 1e-8 {
		t.Errorf("GCV curves differ by %.3g relative: %v vs %v", e, got, want)
	}
	l, lim, scan, scores := sp.BestContinuous()
	if lim != LimitNone {
		t.Logf("limit %s", lim)
	}
	for i, s := range scores {
		if sp.GCV(l) > s*(1+1e-12) {
			t.Errorf("continuous minimum %g (GCV %g) worse than scanned %g (GCV %g)", l, sp.GCV(l), scan[i], s)
		}
	}
}

func TestDualRemoveEqualsFresh(t *testing.T) {
	const n, m, k, nc = 12, 100, 30, 3
	h, labels := dualCodes(3, n, m, k, nc)
	d, _ := NewDual(m)
	d.Add(h[:8*m], 8, labels[:8])
	d.Add(h[8*m:], 4, labels[8:])
	if err := d.Remove([]int{9, 3}); err != nil {
		t.Fatal(err)
	}
	keep := []int{0, 1, 2, 4, 5, 6, 7, 8, 10, 11}
	var hk []float32
	var lk []int
	for _, i := range keep {
		hk = append(hk, h[i*m:(i+1)*m]...)
		lk = append(lk, labels[i])
	}
	f, _ := NewDual(m)
	f.Add(hk, len(keep), lk)
	if !slices.Equal(d.k, f.k) {
		t.Fatal("K after Remove differs from a fresh K of the remaining rows")
	}
	a, _ := d.Solve(context.Background(), 0.5)
	b, _ := f.Solve(context.Background(), 0.5)
	if !slices.Equal(a.Coef(), b.Coef()) {
		t.Error("solution after Remove differs from the fresh one")
	}
	rows, ok := d.Find(hk[3*m:5*m], 2, lk[3:5], 0)
	if !ok || rows[0] != 3 || rows[1] != 4 {
		t.Errorf("Find = %v %v, want [3 4]", rows, ok)
	}
	acc, err := d.Accumulator()
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := NewAccumulator(m)
	ref.Add(hk, len(keep), lk)
	if !slices.Equal(acc.PackedLower(), ref.PackedLower()) || !slices.Equal(acc.S(), ref.S()) {
		t.Error("Accumulator of the rows differs from an Add of them")
	}
}

func relErr(got []float32, want []float64) float64 {
	var d, s float64
	for i, w := range want {
		d += (float64(got[i]) - w) * (float64(got[i]) - w)
		s += w * w
	}
	return math.Sqrt(d / s)
}

func relErr64(got, want []float64) float64 {
	var d, s float64
	for i, w := range want {
		d += (got[i] - w) * (got[i] - w)
		s += w * w
	}
	return math.Sqrt(d / s)
}

// TestDualKernelBits checks K bit for bit against its definition: entry
// (i, j) the float64 sum, over the columns both rows hold in ascending
// order, of the products of their float32 values (exact in float64). The
// adds come in several sizes (one row, a block and more than a block at
// once), so rows scattered together and apart are both covered, and the
// sum must not depend on which of the two rows was added first.
func TestDualKernelBits(t *testing.T) {
	const m, k = 400, 60
	h, labels := dualCodes(5, 80, m, k, 4)
	d, _ := NewDual(m)
	at := 0
	for _, n := range []int{1, 5, 40, 1, 33} {
		if err := d.Add(h[at*m:(at+n)*m], n, labels[at:at+n]); err != nil {
			t.Fatal(err)
		}
		at += n
	}
	n := d.Samples()
	for i := range n {
		for j := range n {
			var s float64
			for c := range m {
				if a, b := h[i*m+c], h[j*m+c]; a != 0 && b != 0 {
					s += float64(a) * float64(b)
				}
			}
			if got := d.k[i*n+j]; math.Float64bits(got) != math.Float64bits(s) {
				t.Fatalf("K[%d][%d] = %v, the ordered sum %v", i, j, got, s)
			}
		}
	}
}

// TestDualCoefBits checks W = HᵀA bit for bit against its definition:
// entry (c, j) the float64 sum over the rows in order of aᵢ꜀·hᵢⱼ, rounded
// once to float32; with more classes than one group of the product (64)
// and a few, and m not a multiple of the workers' split.
func TestDualCoefBits(t *testing.T) {
	for _, nc := range []int{3, 70} {
		const n, m, k = 90, 301, 40
		h, labels := dualCodes(9, n, m, k, nc)
		d, _ := NewDual(m)
		if err := d.Add(h, n, labels); err != nil {
			t.Fatal(err)
		}
		sol, err := d.Solve(context.Background(), 0.3)
		if err != nil {
			t.Fatal(err)
		}
		got := sol.Coef()
		for c := range nc {
			for j := range m {
				var s float64
				for i := range n {
					if v := h[i*m+j]; v != 0 {
						s += sol.a[c*n+i] * float64(v)
					}
				}
				if math.Float32bits(got[c*m+j]) != math.Float32bits(float32(s)) {
					t.Fatalf("classes %d: W[%d][%d] = %v, the ordered sum %v", nc, c, j, got[c*m+j], float32(s))
				}
			}
		}
	}
}

// TestDualSumsAfterChanges checks S against the class sums of the rows
// held (float64 sums in row order, rounded once), after every kind of
// change, asked twice each time (the second answer may be the reused
// one), on a dual form and on a clone changed apart from it.
func TestDualSumsAfterChanges(t *testing.T) {
	const m, k = 200, 30
	h, labels := dualCodes(3, 40, m, k, 4)
	d, _ := NewDual(m)
	check := func(d *Dual, what string) {
		t.Helper()
		n := d.Samples()
		want := make([]float64, d.Classes()*m)
		for i := range n {
			cols, vals, c := d.Row(i)
			if c < 0 {
				continue
			}
			for t, j := range cols {
				want[c*m+int(j)] += float64(vals[t])
			}
		}
		for range 2 {
			got := d.S()
			if len(got) != len(want) {
				t.Fatalf("%s: S has %d values, want %d", what, len(got), len(want))
			}
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(float32(want[i])) {
					t.Fatalf("%s: S[%d] = %v, want %v", what, i, got[i], float32(want[i]))
				}
			}
			got[0]++ // the caller's copy: must not reach the next answer
		}
	}
	if err := d.Add(h[:20*m], 20, labels[:20]); err != nil {
		t.Fatal(err)
	}
	check(d, "add")
	c := d.Clone()
	if err := c.Add(h[20*m:], 20, labels[20:]); err != nil {
		t.Fatal(err)
	}
	check(c, "clone, add")
	check(d, "original after the clone's add")
	if err := c.Remove([]int{0, 5, 33}); err != nil {
		t.Fatal(err)
	}
	check(c, "remove")
	check(d, "original after the clone's remove")
	if err := c.RemoveClass(1); err != nil {
		t.Fatal(err)
	}
	check(c, "remove class")
	c.SetClass(0, 2)
	check(c, "set class")
	c.GrowClasses(6)
	check(c, "grow classes")
	// adds after a reused answer: S grows from the sums it had (the
	// rows before are a prefix), also by classes not seen before
	more := slices.Clone(labels[:10])
	more[3], more[7] = 6, 7
	if err := c.Add(h[:10*m], 10, more); err != nil {
		t.Fatal(err)
	}
	check(c, "add after the changes, new classes")
	if err := c.Add(h[10*m:15*m], 5, labels[10:15]); err != nil {
		t.Fatal(err)
	}
	check(c, "add again")
}

// TestDualCholeskyEqualsEigen: the solution by the Cholesky factor of
// K + λI (what Solve uses) and by K's eigendecomposition (its fallback)
// give the same A, W and hat entries. Both are backward-stable float64
// solves of a system of condition (λmax+λ)/(λmin+λ), at most about
// tr K/λ ≤ 1e7 here (duplicate rows make K singular): they agree to about
// cond·n·2⁻⁵³ ≈ 1e-7 relative of the largest entry, plus W's rounding
// to float32 (6e-8).
func TestDualCholeskyEqualsEigen(t *testing.T) {
	const n, m, k, nc = 24, 200, 60, 4
	h, labels := dualCodes(11, n, m, k, nc)
	copy(h[5*m:6*m], h[2*m:3*m]) // a duplicate sample: K singular
	labels[5] = labels[2]
	d, _ := NewDual(m)
	if err := d.Add(h, n, labels); err != nil {
		t.Fatal(err)
	}
	mean := d.Trace() / n
	rows := []int{0, 2, 5, 17}
	for _, rel := range []float64{1e-6, 1e-3, 1, 1e3} {
		lambda := rel * mean
		ch, err := d.Solve(context.Background(), lambda)
		if err != nil {
			t.Fatal(err)
		}
		if ch.chol == nil {
			t.Fatalf("λ=%g: Solve did not factor K + λI", lambda)
		}
		eg, err := d.solveEigen(context.Background(), lambda)
		if err != nil {
			t.Fatal(err)
		}
		if e := relErr64(ch.a, eg.a); e > 1e-6 {
			t.Errorf("λ=%g: A differs by %.3g relative", lambda, e)
		}
		if e := relErr(ch.Coef(), toF64(eg.Coef())); e > 1e-6 {
			t.Errorf("λ=%g: W differs by %.3g relative", lambda, e)
		}
		hc, he := ch.Hat(rows, rows), eg.Hat(rows, rows)
		for i := range hc {
			if math.Abs(hc[i]-he[i]) > 1e-6 {
				t.Errorf("λ=%g: hat entry %d: Cholesky %.12g, eigen %.12g", lambda, i, hc[i], he[i])
			}
		}
	}
}

func toF64(a []float32) []float64 {
	out := make([]float64, len(a))
	for i, v := range a {
		out[i] = float64(v)
	}
	return out
}

// TestDualLeaveOneOut checks the closed forms of Solution.LeaveOneOut
// against their definitions: the leave-one-out scores of row i against
// the solution of a fresh Dual of the other rows, evaluated at row i (its
// kernel entries with them); the fitted scores against K·A; the
// leverages against Hat. λ from 10⁻⁶ to 10 of the mean eigenvalue, on
// the Cholesky and the eigen solution. The fresh solve is a float64 solve
// of condition at most (λmax+λ)/λ ≤ 1e7·n: 1e-7 absolute bounds the
// differences of scores of size 1 with room (the closed form itself is
// good to about 1e-12 here).
func TestDualLeaveOneOut(t *testing.T) {
	const n, m, k, nc = 18, 150, 40, 3
	h, labels := dualCodes(21, n, m, k, nc)
	d, _ := NewDual(m)
	if err := d.Add(h, n, labels); err != nil {
		t.Fatal(err)
	}
	mean := d.Trace() / n
	rows := []int{0, 7, 17}
	for _, rel := range []float64{1e-6, 1e-3, 1, 10} {
		lambda := rel * mean
		ch, err := d.Solve(context.Background(), lambda)
		if err != nil {
			t.Fatal(err)
		}
		eg, err := d.solveEigen(context.Background(), lambda)
		if err != nil {
			t.Fatal(err)
		}
		for _, sol := range []*Solution{ch, eg} {
			fitted, loo, lev := sol.LeaveOneOut(rows)
			want := sol.Fitted(rows)
			hat := sol.Hat(rows, rows)
			for p, i := range rows {
				if math.Abs(lev[p]-hat[p*len(rows)+p]) > 1e-9 {
					t.Errorf("λ=%g row %d: leverage %v, hat %v", lambda, i, lev[p], hat[p*len(rows)+p])
				}
				// the fresh solve without row i
				var keep []int
				for r := range n {
					if r != i {
						keep = append(keep, r)
					}
				}
				hs := make([]float32, 0, (n-1)*m)
				ls := make([]int, 0, n-1)
				for _, r := range keep {
					hs = append(hs, h[r*m:(r+1)*m]...)
					ls = append(ls, labels[r])
				}
				f, _ := NewDual(m)
				f.GrowClasses(nc)
				if err := f.Add(hs, n-1, ls); err != nil {
					t.Fatal(err)
				}
				fs, err := f.Solve(context.Background(), lambda)
				if err != nil {
					t.Fatal(err)
				}
				for c := range nc {
					var ref float64 // Σ_r K[i][r]·A_fresh[r][c]
					for q, r := range keep {
						ref += d.k[i*n+r] * fs.a[c*(n-1)+q]
					}
					if math.Abs(loo[p*nc+c]-ref) > 1e-7 {
						t.Errorf("λ=%g row %d class %d: leave-one-out %.12g, fresh solve %.12g", lambda, i, c, loo[p*nc+c], ref)
					}
					if math.Abs(fitted[p*nc+c]-want[p*nc+c]) > 1e-7 {
						t.Errorf("λ=%g row %d class %d: fitted %.12g, K·A %.12g", lambda, i, c, fitted[p*nc+c], want[p*nc+c])
					}
				}
			}
		}
	}
}
