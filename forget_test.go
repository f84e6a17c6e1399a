package flycl

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestForgetEqualsNeverSeen: a model taught tasks {0,1}, {2}, {3,4} that
// then forgets class 2 with its data equals the model taught only {0,1}
// and {3,4}: same classes, λ, counts and predictions; G and C equal up to
// float32 rounding bounded below.
func TestForgetEqualsNeverSeen(t *testing.T) {
	ctx := context.Background()
	const d = 16
	cfg := Config{M: 200, P: 6, K: 60, Seed: 9, Lambdas: []float64{0.1, 1, 10, 100}}
	type task struct {
		x []float32
		y []int
	}
	var tasks []task
	for i, cls := range [][]int{{0, 1}, {2}, {3, 4}} {
		x, y := clusters(uint64(40+i), 60*len(cls), d, cls, 0.9)
		tasks = append(tasks, task{x, y})
	}
	full, _ := New(cfg, d)
	never, _ := New(cfg, d)
	for i, tk := range tasks {
		if _, err := full.Learn(ctx, tk.x, tk.y, nil); err != nil {
			t.Fatal(err)
		}
		if i != 1 {
			if _, err := never.Learn(ctx, tk.x, tk.y, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := full.state()
	// Wrong data is refused and leaves the model as it was.
	if _, err := full.Forget(ctx, 2, tasks[1].x[:30*d]); err == nil || !strings.Contains(err.Error(), "learned 60 samples") {
		t.Fatalf("half the data: %v", err)
	}
	other, _ := clusters(77, 60, d, []int{2}, 0.9)
	if _, err := full.Forget(ctx, 2, other); err == nil || !strings.Contains(err.Error(), "not what the class learned") {
		t.Fatalf("other samples of the class: %v", err)
	}
	if _, err := full.Forget(ctx, 7, other); err == nil {
		t.Fatal("unknown class: no error")
	}
	if st := full.state(); !sameFloats(st.Coef, before.Coef) || st.Version != before.Version {
		t.Fatal("a refused forget changed the model")
	}

	// Reversed order: Forget takes the samples in any order.
	rev := make([]float32, 0, len(tasks[1].x))
	for i := 59; i >= 0; i-- {
		rev = append(rev, tasks[1].x[i*d:(i+1)*d]...)
	}
	rec, err := full.Forget(ctx, 2, rev)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rec.Removed, []int{2}) || full.Version() != 4 {
		t.Fatalf("record %+v version %d", rec, full.Version())
	}
	a, b := full.state(), never.state()
	if !slices.Equal(a.Labels, b.Labels) || a.Lambda != b.Lambda || !slices.Equal(a.Counts, b.Counts) || full.Samples() != never.Samples() {
		t.Fatalf("forgotten %v λ=%g counts %v n=%d; never seen %v λ=%g counts %v n=%d",
			a.Labels, a.Lambda, a.Counts, full.Samples(), b.Labels, b.Lambda, b.Counts, never.Samples())
	}

	// G: both are float32 sums of products h_ia·h_ib in some order (the
	// forgotten model's over all N samples, then minus the n forgotten
	// ones; the other's over the N−n kept). Each sum of k terms is within
	// γ_k·Σ|terms| of the exact sum (γ_k = k·u/(1−k·u), u = 2⁻²⁴), so the
	// two differ by at most 3·γ_{N+1}·Σ_all |h_ia·h_ib|.
	var h [][]float32
	for _, tk := range tasks {
		c, err := full.expandCodes(ctx, tk.x)
		if err != nil {
			t.Fatal(err)
		}
		h = append(h, c)
	}
	N := 0
	for _, tk := range tasks {
		N += len(tk.y)
	}
	checkForgotten(t, full, never, h, N, 1)
	tx, _ := clusters(90, 200, d, []int{0, 1, 3, 4}, 1.2)
	pa, err := full.Predictor().Predict(ctx, tx)
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := never.Predictor().Predict(ctx, tx)
	if !slices.Equal(pa, pb) {
		t.Fatal("predictions of the forgotten model differ from the never-seen one")
	}
	// Learning continues identically: the class can be taught again.
	if _, err := full.Learn(ctx, tasks[1].x, tasks[1].y, nil); err != nil {
		t.Fatal(err)
	}
	if got := full.Classes().Labels(); !slices.Equal(got, []int{0, 1, 3, 4, 2}) {
		t.Fatalf("classes after re-learning: %v", got)
	}
}

// checkForgotten asserts that full, which forgot some classes, equals
// never, which never saw them, in G and C up to the float32 rounding
// bounded below. h holds the codes of every sample full ever learned, N
// their count, forgets the number of Forget calls full made.
//
// G: both are float32 sums of products h_ia·h_ib in some order (the
// forgotten model's over all N samples, then minus the forgotten ones,
// one rank update per forget; the other's over the kept). Each sum of k
// terms is within γ_k·Σ|terms| of the exact sum (γ_k = k·u/(1−k·u),
// u = 2⁻²⁴), so the two differ by at most (2+forgets)·γ_{N+1}·Σ_all
// |h_ia·h_ib|. (A diagonal that Sub clamped at 0 is only nearer the exact
// value.)
func checkForgotten(t *testing.T, full, never *Model, h [][]float32, N, forgets int) {
	t.Helper()
	u := math.Ldexp(1, -24)
	gamma := float64(N+1) * u / (1 - float64(N+1)*u)
	a, b := full.state(), never.state()
	m := a.Config.M
	ga, gb := full.Snapshot(), never.Snapshot()
	var dG2 float64
	for i := 0; i < m; i++ {
		ra, rb := ga.lowerRow(i), gb.lowerRow(i)
		for j := 0; j <= i; j++ {
			var abs float64
			for _, c := range h {
				for s := 0; s < len(c)/m; s++ {
					abs += math.Abs(float64(c[s*m+i]) * float64(c[s*m+j]))
				}
			}
			diff := math.Abs(float64(ra[j]) - float64(rb[j]))
			if bound := float64(2+forgets) * gamma * abs; diff > bound {
				t.Fatalf("G[%d][%d]: %g vs %g, differ by %g > bound %g", i, j, ra[j], rb[j], diff, bound)
			}
			w := 2.0
			if i == j {
				w = 1
			}
			dG2 += w * diff * diff
		}
	}
	// C = (G+λI)⁻¹S: a perturbation ΔG moves C by at most
	// ‖ΔG‖₂/λ_min(G+λI)·‖C‖ ≤ ‖ΔG‖_F/λ·‖C‖ (first order), and each
	// Cholesky solve adds a relative error of about m·u·κ, κ ≤ (‖G‖_F+λ)/λ.
	var gF2 float64
	for i := 0; i < m; i++ {
		for j, v := range gb.lowerRow(i) {
			w := 2.0
			if i == j {
				w = 1
			}
			gF2 += w * float64(v) * float64(v)
		}
	}
	lambda := a.Lambda
	kappa := (math.Sqrt(gF2) + lambda) / lambda
	tolC := 2 * (math.Sqrt(dG2)/lambda + 2*float64(m)*u*kappa)
	var dC2, c2 float64
	for i := range a.Coef {
		dc := float64(a.Coef[i]) - float64(b.Coef[i])
		dC2 += dc * dc
		c2 += float64(b.Coef[i]) * float64(b.Coef[i])
	}
	rel := math.Sqrt(dC2 / c2)
	t.Logf("C differs by %.3g relative (bound %.3g); ‖ΔG‖_F = %.3g, λ = %g", rel, tolC, math.Sqrt(dG2), lambda)
	if rel > tolC {
		t.Fatalf("C differs by %.3g relative, bound %.3g (‖ΔG‖_F=%.3g λ=%g κ≤%.3g)", rel, tolC, math.Sqrt(dG2), lambda, kappa)
	}
}

func sameFloats(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// TestDropClass: without data only the class's column goes; the other
// classes' scores are bit for bit unchanged and G still holds its samples.
func TestDropClass(t *testing.T) {
	ctx := context.Background()
	const d = 10
	m, _ := New(Config{M: 120, P: 4, K: 40, Lambdas: []float64{1, 10}}, d)
	x, y := clusters(1, 90, d, []int{4, 5, 6}, 0.5)
	m.Learn(ctx, x, y, nil)
	if err := m.SetClassName(5, "five"); err != nil {
		t.Fatal(err)
	}
	before, _ := m.Predictor().Scores(ctx, x)
	g := m.Snapshot().lowerRow(7)
	if _, err := m.Forget(ctx, 5, nil); err != nil {
		t.Fatal(err)
	}
	after, _ := m.Predictor().Scores(ctx, x)
	for i := 0; i < 90; i++ {
		if math.Float32bits(after[i*2]) != math.Float32bits(before[i*3]) || math.Float32bits(after[i*2+1]) != math.Float32bits(before[i*3+2]) {
			t.Fatalf("sample %d: scores of the kept classes changed", i)
		}
	}
	if !sameFloats(m.Snapshot().lowerRow(7), g) || m.Samples() != 90 {
		t.Fatal("G or the sample count changed")
	}
	if !slices.Equal(m.Classes().Names(), []string{"4", "6"}) || !slices.Equal(m.Classes().Counts(), []int{30, 30}) {
		t.Fatalf("names %v counts %v", m.Classes().Names(), m.Classes().Counts())
	}
	m.Forget(ctx, 4, nil)
	m.Forget(ctx, 6, nil)
	if _, err := m.Predictor().Scores(ctx, x); err == nil {
		t.Fatal("no classes left: scores without error")
	}
	if _, err := m.Snapshot().Model(); err != nil {
		t.Fatalf("empty model does not round-trip: %v", err)
	}
}

// TestPredictorIsImmutable: a Predictor keeps answering as the model was
// when it was taken, concurrently with learning on the model (run with
// -race).
func TestPredictorIsImmutable(t *testing.T) {
	ctx := context.Background()
	const d = 10
	m, _ := New(Config{M: 150, P: 4, K: 50, Lambdas: []float64{1, 10}}, d)
	x, y := clusters(2, 60, d, []int{0, 1}, 0.5)
	m.Learn(ctx, x, y, nil)
	p := m.Predictor()
	want, _ := p.Scores(ctx, x)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 3; i++ {
			x2, y2 := clusters(uint64(10+i), 30, d, []int{2 + i}, 0.5)
			m.Learn(ctx, x2, y2, nil)
		}
	}()
	for i := 0; i < 5; i++ {
		got, err := p.Scores(ctx, x)
		if err != nil || !sameFloats(got, want) {
			t.Fatalf("predictor scores changed (err %v)", err)
		}
	}
	<-done
	if p.Version() != 1 || p.Classes().Len() != 2 || m.Version() != 4 {
		t.Fatalf("versions %d/%d classes %v", p.Version(), m.Version(), p.Classes().Labels())
	}
	top, err := m.Predictor().Top(ctx, x[:d], 3)
	if err != nil || len(top[0]) != 3 || top[0][0].Score < top[0][1].Score {
		t.Fatalf("top: %v %v", top, err)
	}
}

// TestCloneIsIndependent: learning on a clone leaves the original as it was.
func TestCloneIsIndependent(t *testing.T) {
	ctx := context.Background()
	const d = 10
	m, _ := New(Config{M: 100, P: 4, K: 30, Lambdas: []float64{1, 10}}, d)
	x, y := clusters(3, 40, d, []int{0, 1}, 0.5)
	m.Learn(ctx, x, y, nil)
	snap := m.Snapshot()
	c := m.Clone()
	x2, y2 := clusters(4, 20, d, []int{2}, 0.5)
	if _, err := c.Learn(ctx, x2, y2, nil); err != nil {
		t.Fatal(err)
	}
	if !sameFloats(m.Snapshot().lowerRow(50), snap.lowerRow(50)) || !sameFloats(m.Snapshot().S(), snap.S()) || m.Classes().Len() != 2 {
		t.Fatal("learning on the clone changed the original")
	}
	// Learning on the original now gives what the clone got.
	m.Learn(ctx, x2, y2, nil)
	if !sameFloats(m.state().Coef, c.state().Coef) {
		t.Fatal("clone and original diverge")
	}
}

func TestClassNames(t *testing.T) {
	m, _ := New(Config{M: 50, P: 2, K: 10}, 4)
	labels, err := m.LabelsFor([]string{"cat", "7", "dog", "cat"})
	if err != nil || !slices.Equal(labels, []int{0, 7, 8, 0}) {
		t.Fatalf("labels %v err %v", labels, err)
	}
	if err := m.SetClassName(3, "dog"); err == nil {
		t.Error("duplicate name accepted")
	}
	if err := m.SetClassName(3, "4"); err == nil {
		t.Error("a number naming another label accepted")
	}
	for _, bad := range []string{"", "a\nb", string([]byte{0xff}), strings.Repeat("x", MaxNameLen+1)} {
		if _, err := m.LabelsFor([]string{bad}); err == nil {
			t.Errorf("name %q accepted", bad)
		}
	}
	if _, err := m.LabelsFor([]string{"0"}); err == nil {
		t.Error(`"0" accepted while label 0 is named cat`)
	}
}

// TestForgetLastTaskRestoresLambda: forgetting the class of the last task
// re-solves with the λ the remaining tasks chose (that of the model that
// never saw it), not the λ of the forgotten task.
func TestForgetLastTaskRestoresLambda(t *testing.T) {
	ctx := context.Background()
	const d = 12
	cfg := Config{M: 150, P: 5, K: 45, Seed: 2, Lambdas: []float64{1e-2, 1, 100, 1e4}}
	full, _ := New(cfg, d)
	never, _ := New(cfg, d)
	x1, y1 := clusters(5, 80, d, []int{0, 1}, 0.3)
	x2, y2 := clusters(6, 8, d, []int{2}, 3) // few noisy samples: GCV picks another λ
	full.Learn(ctx, x1, y1, nil)
	never.Learn(ctx, x1, y1, nil)
	full.Learn(ctx, x2, y2, nil)
	if full.Lambda() == never.Lambda() {
		t.Skipf("both tasks chose λ=%g: the test needs different ones", full.Lambda())
	}
	if _, err := full.Forget(ctx, 2, x2); err != nil {
		t.Fatal(err)
	}
	if full.Lambda() != never.Lambda() {
		t.Fatalf("λ after forgetting the last task %g, never-seen model %g", full.Lambda(), never.Lambda())
	}
	tx, _ := clusters(7, 100, d, []int{0, 1}, 0.6)
	pa, _ := full.Predictor().Predict(ctx, tx)
	pb, _ := never.Predictor().Predict(ctx, tx)
	if !slices.Equal(pa, pb) {
		t.Fatal("predictions differ from the never-seen model")
	}
}

// roundTrip rebuilds a model from its snapshot through NewSnapshot, the
// validation every model file goes through on load.
func roundTrip(m *Model) (*Model, error) {
	s := m.Snapshot()
	s2, err := newSnapshot(s.State(), s.Projection(), slices.Clone(s.g), slices.Clone(s.s), s.Samples())
	if err != nil {
		return nil, err
	}
	return s2.Model()
}

// TestForgetTwiceReloads: two exact forgets in a row ({A,B} then {C};
// forget C, forget A) leave statistics that reload (float32 subtraction
// must not leave a negative Gram diagonal, which NewSnapshot refuses),
// and the result equals a model that only ever saw B. The λ grid has one
// value so that λ cannot differ for reasons unrelated to forgetting (the
// task {A,B} mixed the forgotten class with a kept one).
func TestForgetTwiceReloads(t *testing.T) {
	ctx := context.Background()
	const d = 16
	cfg := Config{M: 400, P: 6, K: 40, Seed: 5, Lambdas: []float64{10}}
	for seed := uint64(0); seed < 5; seed++ {
		r := rand.New(rand.NewPCG(seed, 1))
		gen := func(n int, f func(j int) float64, label int) ([]float32, []int) {
			var x []float32
			var y []int
			for i := 0; i < n; i++ {
				for j := 0; j < d; j++ {
					x = append(x, float32(f(j)))
				}
				y = append(y, label)
			}
			return x, y
		}
		xa, ya := gen(37, func(j int) float64 { return r.NormFloat64()*3 + float64(j%3) }, 0)
		xb, yb := gen(29, func(j int) float64 { return r.NormFloat64()*0.7 - float64(j%5) }, 1)
		xc, yc := gen(23, func(int) float64 { return r.NormFloat64() * 5 }, 2)
		full, _ := New(cfg, d)
		never, _ := New(cfg, d)
		if _, err := full.Learn(ctx, append(slices.Clone(xa), xb...), append(slices.Clone(ya), yb...), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := full.Learn(ctx, xc, yc, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := never.Learn(ctx, xb, yb, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := full.Forget(ctx, 2, xc); err != nil {
			t.Fatal(err)
		}
		if _, err := full.Forget(ctx, 0, xa); err != nil {
			t.Fatal(err)
		}
		back, err := roundTrip(full)
		if err != nil {
			t.Fatalf("seed %d: model after two forgets does not reload: %v", seed, err)
		}
		var h [][]float32
		for _, x := range [][]float32{xa, xb, xc} {
			c, err := back.expandCodes(ctx, x)
			if err != nil {
				t.Fatal(err)
			}
			h = append(h, c)
		}
		if a, b := back.state(), never.state(); !slices.Equal(a.Labels, b.Labels) || a.Lambda != b.Lambda || !slices.Equal(a.Counts, b.Counts) || back.Samples() != never.Samples() {
			t.Fatalf("seed %d: forgotten %v λ=%g counts %v; never seen %v λ=%g counts %v", seed, a.Labels, a.Lambda, a.Counts, b.Labels, b.Lambda, b.Counts)
		}
		checkForgotten(t, back, never, h, 37+29+23, 2)
	}
}

// TestForgetAfterLearnStats: steps learned from statistics record their
// classes like LearnTask's, so Forget finds the λ of a model that never
// saw the class. Tasks {0,1}, {1} (more samples of a known class: no new
// class), {2}, all by LearnStats; forgetting 2 must give the λ of task
// {1}, which a step without its classes recorded would skip.
func TestForgetAfterLearnStats(t *testing.T) {
	ctx := context.Background()
	const d = 12
	cfg := Config{M: 200, P: 5, K: 60, Seed: 4, Lambdas: []float64{0.01, 0.1, 1, 10, 100, 1000}}
	x0, y0 := clusters(1, 60, d, []int{0, 1}, 0.3)
	x1, y1 := clusters(2, 40, d, []int{1}, 3)
	x2, y2 := clusters(3, 50, d, []int{2}, 0.8)
	full, _ := New(cfg, d)
	never, _ := New(cfg, d)
	learn := func(m *Model, x []float32, y []int) TaskRecord {
		st, err := m.TaskStats(ctx, x, y)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := m.Learn(ctx, nil, nil, &LearnOptions{Stats: st})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(rec.Classes, distinctSorted(y)) {
			t.Fatalf("record classes %v, want %v", rec.Classes, distinctSorted(y))
		}
		return rec
	}
	r0 := learn(full, x0, y0)
	r1 := learn(full, x1, y1)
	learn(full, x2, y2)
	learn(never, x0, y0)
	learn(never, x1, y1)
	if r0.Lambda == r1.Lambda {
		t.Fatalf("setup: tasks {0,1} and {1} chose the same λ %g; the test could not tell them apart", r0.Lambda)
	}
	if _, err := full.Forget(ctx, 2, x2); err != nil {
		t.Fatal(err)
	}
	a, b := full.state(), never.state()
	if !slices.Equal(a.Labels, b.Labels) || a.Lambda != b.Lambda || !slices.Equal(a.Counts, b.Counts) || full.Samples() != never.Samples() {
		t.Fatalf("forgotten %v λ=%g counts %v; never seen %v λ=%g counts %v", a.Labels, a.Lambda, a.Counts, b.Labels, b.Lambda, b.Counts)
	}
	var h [][]float32
	for _, x := range [][]float32{x0, x1, x2} {
		c, err := full.expandCodes(ctx, x)
		if err != nil {
			t.Fatal(err)
		}
		h = append(h, c)
	}
	checkForgotten(t, full, never, h, 150, 1)
}
