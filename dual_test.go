package flycl

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/reject"
)

// scoresOf returns the model's class scores of x (rows of Classes()).
func scoresOf(t *testing.T, m *Model, x []float32) []float32 {
	t.Helper()
	s, err := m.Predictor().Scores(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// maxRelDiff returns max |a−b| / max |b|.
func maxRelDiff(a, b []float32) float64 {
	var d, s float64
	for i := range a {
		d = max(d, math.Abs(float64(a[i])-float64(b[i])))
		s = max(s, math.Abs(float64(b[i])))
	}
	return d / s
}

// TestDualEqualsPrimal: the same samples and λ learned by a dual and a
// primal model give the same classifier: identical top-1 wherever the
// top two scores are further apart than the tolerance, and scores within
//
//	tol = 4·√m·u·κ,  κ = (σmax + λ)/λ,  u = 2⁻²⁴,
//
// κ the condition number of G + λI (σmax the largest eigenvalue of
// K = HHᵀ, which G shares), √m·u the backward error of the primal's
// float32 Cholesky with float64-accumulated sums (rounding errors of m
// terms add like a random walk), and the factor 4 for the two solves and
// the product with the codes. The dual is float64 throughout (its own
// error is κ·1e-16, negligible). The GCV curve each learn scored is the
// same curve: the dual's equals the explicit float64 definition (thin
// SVD of the codes, svdGCVScores) to 1e-9 relative, as a float64
// computation of a curve whose terms are sums of positive numbers; the
// primal's (float32 K with float64 sums) to FlatGCV·10 relative.
func TestDualEqualsPrimal(t *testing.T) {
	ctx := context.Background()
	base := Config{M: 1000, P: 16, K: 300, Seed: 5, Lambdas: []float64{0.1, 1, 10, 100, 1e3},
		Projection: projection.Sparse}
	dcfg := base
	dcfg.Dual = 1000
	const d = 40
	classes := []int{3, 7, 11, 20}
	x1, y1 := clusters(1, 24, d, classes[:2], 1.5)
	x2, y2 := clusters(2, 30, d, classes[2:], 1.5)
	xt, _ := clusters(3, 60, d, classes, 1.5)
	p, _ := New(base, d)
	q, _ := New(dcfg, d)
	if f, _ := q.Form(); f != "dual" {
		t.Fatalf("form %s, want dual", f)
	}
	for i, task := range []struct {
		x []float32
		y []int
	}{{x1, y1}, {x2, y2}} {
		// the GCV curves, scored by a learn of each model
		rp, err := p.Clone().Learn(ctx, task.x, task.y, nil)
		if err != nil {
			t.Fatal(err)
		}
		rq, err := q.Clone().Learn(ctx, task.x, task.y, nil)
		if err != nil {
			t.Fatal(err)
		}
		h, err := q.expandCodes(ctx, task.x)
		if err != nil {
			t.Fatal(err)
		}
		want := svdGCVScores(h, len(task.y), base.M, task.y, base.Lambdas)
		for j, w := range want {
			if r := math.Abs(rq.GCV[j]-w) / w; r > 1e-9 {
				t.Errorf("task %d: GCV(%g) %g dual, %g by definition", i, base.Lambdas[j], rq.GCV[j], w)
			}
			if r := math.Abs(rp.GCV[j]-w) / w; r > 10*FlatGCV {
				t.Errorf("task %d: GCV(%g) %g primal, %g by definition", i, base.Lambdas[j], rp.GCV[j], w)
			}
		}
		// the classifiers, at one λ
		for _, m := range []*Model{p, q} {
			if _, err := m.Learn(ctx, task.x, task.y, &LearnOptions{Lambda: 1000}); err != nil {
				t.Fatal(err)
			}
		}
	}
	eig, err := q.dual.Eigenvalues()
	if err != nil {
		t.Fatal(err)
	}
	kappa := (eig[len(eig)-1] + q.lambda) / q.lambda
	tol := 4 * math.Sqrt(float64(base.M)) * 0x1p-24 * kappa
	sp, sq := scoresOf(t, p, xt), scoresOf(t, q, xt)
	if e := maxRelDiff(sq, sp); e > tol {
		t.Errorf("scores differ by %.3g relative, more than %.3g (κ = %.3g)", e, tol, kappa)
	}
	nc := len(classes)
	decided := 0
	for i := range len(xt) / d {
		a, b := sp[i*nc:(i+1)*nc], sq[i*nc:(i+1)*nc]
		top := argmax(a)
		second := math.Inf(-1)
		for c, v := range a {
			if c != top {
				second = max(second, float64(v))
			}
		}
		if float64(a[top])-second <= 2*tol*float64(slices.Max(a)) {
			continue
		}
		decided++
		if argmax(b) != top {
			t.Errorf("sample %d: top-1 %d primal, %d dual", i, top, argmax(b))
		}
	}
	if decided < len(xt)/d*9/10 {
		t.Errorf("only %d of %d samples decided beyond the tolerance", decided, len(xt)/d)
	}
	t.Logf("κ %.3g, tolerance %.3g, scores differ by %.3g; %d samples compared", kappa, tol, maxRelDiff(sq, sp), decided)
}

// TestDualUndoForgetExact: in the dual form, a learn taken back (Unlearn
// with the λ before it, as an undo does) and a class forgotten with its
// data leave the model equal to a fresh one that learned the remaining
// samples, within 1e-9 relative (float64 rounding: the remaining rows'
// K is the same bits, and so is everything solved from it), at m = 10000.
func TestDualUndoForgetExact(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{15, 100, 400, 1000} { // under a second in all on 2 cores
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			cfg := Config{M: 10000, P: 25, K: 3000, Seed: 9, LambdaScale: LambdaRelative, WidenGrid: true, Dual: 1000}
			const d = 64
			old := []int{0, 1, 2}
			x1, y1 := clusters(11, n-5, d, old, 1)
			x2, y2 := clusters(12, 5, d, []int{2, 5}, 1) // a known class and a new one
			x3, y3 := clusters(13, 5, d, []int{8}, 1)    // a class of its own
			xt, _ := clusters(14, 12, d, []int{0, 1, 2, 5, 8}, 1)
			fresh, _ := New(cfg, d)
			if _, err := fresh.Learn(ctx, x1, y1, nil); err != nil {
				t.Fatal(err)
			}
			m := fresh.Clone()
			m.SetCalibration(&reject.Calibration{})
			fresh.SetCalibration(&reject.Calibration{})
			before := m.Lambda()
			if _, err := m.Learn(ctx, x2, y2, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Unlearn(ctx, x2, y2, before); err != nil {
				t.Fatal(err)
			}
			if f, _ := m.Form(); f != "dual" {
				t.Fatalf("form %s after unlearn", f)
			}
			want := scoresOf(t, fresh, xt)
			if e := maxRelDiff(scoresOf(t, m, xt), want); e > 1e-9 {
				t.Errorf("learn + undo: scores differ from a fresh learn by %.3g relative", e)
			}
			// a forget after a learn (on a model whose history holds no
			// undone learn: Forget keeps the λ of the last learn of another
			// class, and an undone learn still counts there)
			m = fresh.Clone()
			if _, err := m.Learn(ctx, x3, y3, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Forget(ctx, 8, x3); err != nil {
				t.Fatal(err)
			}
			if e := maxRelDiff(scoresOf(t, m, xt), want); e > 1e-9 {
				t.Errorf("learn + forget: scores differ from a fresh learn by %.3g relative", e)
			}
			// a sample that was not learned is refused, the model unchanged
			x4, y4 := clusters(15, 1, d, []int{0}, 1)
			if _, err := m.Unlearn(ctx, x4, y4, before); err == nil {
				t.Error("unlearn of a sample never learned succeeded")
			}
		})
	}
}

// TestDualSwitchesToPrimal: past Config.Dual samples the model switches
// to the primal form, and its classifier is that of a primal model of
// the same samples (the tolerance of TestDualEqualsPrimal); statistics
// learned into a dual model switch it too.
func TestDualSwitchesToPrimal(t *testing.T) {
	ctx := context.Background()
	base := Config{M: 800, P: 10, K: 240, Seed: 2, Lambdas: []float64{1, 10, 100}, Projection: projection.Sparse}
	dcfg := base
	dcfg.Dual = 30
	const d = 32
	x1, y1 := clusters(21, 20, d, []int{0, 1}, 1)
	x2, y2 := clusters(22, 20, d, []int{1, 2}, 1)
	xt, _ := clusters(23, 30, d, []int{0, 1, 2}, 1)
	p, _ := New(base, d)
	q, _ := New(dcfg, d)
	for _, m := range []*Model{p, q} {
		if _, err := m.Learn(ctx, x1, y1, &LearnOptions{Lambda: 10}); err != nil {
			t.Fatal(err)
		}
	}
	if f, _ := q.Form(); f != "dual" {
		t.Fatalf("form %s after 20 samples", f)
	}
	for _, m := range []*Model{p, q} {
		if _, err := m.Learn(ctx, x2, y2, &LearnOptions{Lambda: 10}); err != nil {
			t.Fatal(err)
		}
	}
	if f, _ := q.Form(); f != "primal" {
		t.Fatalf("form %s after 40 samples, limit 30", f)
	}
	if e := maxRelDiff(scoresOf(t, q, xt), scoresOf(t, p, xt)); e > 1e-3 {
		t.Errorf("switched model's scores differ from the primal's by %.3g", e)
	}
	r, _ := New(dcfg, d)
	r.Learn(ctx, x1, y1, &LearnOptions{Lambda: 10})
	st, err := r.TaskStats(ctx, x2, y2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Learn(ctx, nil, nil, &LearnOptions{Stats: st, Lambda: 10}); err != nil {
		t.Fatal(err)
	}
	if f, _ := r.Form(); f != "primal" {
		t.Errorf("form %s after a learn of statistics", f)
	}
}

// TestDualSnapshotRoundTrip: a dual model's snapshot gives back a dual
// model with the same classifier, which learns on exactly as the original.
func TestDualSnapshotRoundTrip(t *testing.T) {
	ctx := context.Background()
	cfg := Config{M: 500, P: 8, K: 150, Seed: 4, LambdaScale: LambdaRelative, WidenGrid: true, Dual: 100}
	const d = 16
	x1, y1 := clusters(31, 12, d, []int{0, 1, 2}, 1)
	x2, y2 := clusters(32, 6, d, []int{3}, 1)
	m, _ := New(cfg, d)
	m.Learn(ctx, x1, y1, nil)
	c, err := m.Snapshot().Model()
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := c.Form(); f != "dual" {
		t.Fatalf("form %s", f)
	}
	m.Learn(ctx, x2, y2, nil)
	c.Learn(ctx, x2, y2, nil)
	if !slices.Equal(scoresOf(t, m, x1), scoresOf(t, c, x1)) {
		t.Error("a restored dual model learns differently")
	}
}
