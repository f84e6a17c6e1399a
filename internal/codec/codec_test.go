package codec

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/reject"
	"github.com/flycl/flycl/ridge"
)

// TestHooks calls every function of the codec on a small model against
// what the model's own API says (a hook that flycl did not set, or set
// with another type, panics here): a view's rows of G equal a copy's
// bit for bit, a snapshot assembled from a copy's parts and a model
// restored from them score as the model does, the calibration pool
// comes back after a restore, and a zero update limit makes a learn
// refactor.
func TestHooks(t *testing.T) {
	ctx := context.Background()
	const d, n = 8, 40
	cfg := flycl.Config{M: 60, P: 4, K: 20, Seed: 3, Lambdas: []float64{0.1, 1, 10}}
	m, err := flycl.New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetCalibration(&reject.Calibration{}); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	x, y := make([]float32, n*d), make([]int, n)
	for i := range y {
		y[i] = i % 2
		for j := range d {
			x[i*d+j] = float32(r.NormFloat64()) + float32(3*y[i]*(j%2))
		}
	}
	if _, err := m.Learn(ctx, x, y, nil); err != nil {
		t.Fatal(err)
	}
	want, err := m.Predictor().Scores(ctx, x)
	if err != nil {
		t.Fatal(err)
	}

	view, snap := View(m), m.Snapshot()
	g := make([]float32, 0, cfg.M*(cfg.M+1)/2)
	for i := range cfg.M {
		if !slices.Equal(LowerRow(view, i), LowerRow(snap, i)) {
			t.Fatalf("G row %d of the view differs from the copy's", i)
		}
		g = AppendLowerRow(g, snap, i)
	}
	st := snap.State()
	built, err := NewSnapshot(st, snap.Projection(), g, slices.Clone(snap.S()), snap.Samples())
	if err != nil {
		t.Fatal(err)
	}
	acc, err := ridge.NewAccumulator(cfg.M)
	if err != nil {
		t.Fatal(err)
	}
	if err := acc.SetPackedLower(g); err != nil {
		t.Fatal(err)
	}
	if err := acc.SetS(slices.Clone(snap.S()), len(st.Labels), snap.Samples()); err != nil {
		t.Fatal(err)
	}
	back, err := Restore(st, snap.Projection(), acc)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := built.Predictor().Scores(ctx, x); err != nil || !slices.Equal(got, want) {
		t.Errorf("the assembled snapshot's scores differ from the model's (%v)", err)
	}
	if got, err := back.Predictor().Scores(ctx, x); err != nil || !slices.Equal(got, want) {
		t.Errorf("the restored model's scores differ from the model's (%v)", err)
	}

	pool := CalibrationPool(m)
	if len(pool) == 0 || !slices.Equal(pool, st.CalibrationPool) {
		t.Fatalf("calibration pool %v, state's %v", pool, st.CalibrationPool)
	}
	if loo, cls := LeaveOneOut(m); len(cls) == 0 || len(loo) != len(cls)*m.Classes().Len() {
		t.Errorf("leave-one-out: %d scores for %d samples", len(loo), len(cls))
	}
	if err := RestoreCalibration(back, reject.Rule{}, nil); err != nil || back.Rejection().Enabled() || len(CalibrationPool(back)) != 0 {
		t.Fatalf("rejection %v, pool %d after restoring none (%v)", back.Rejection(), len(CalibrationPool(back)), err)
	}
	if err := RestoreCalibration(back, m.Rejection(), pool); err != nil || back.Rejection() != m.Rejection() || !slices.Equal(CalibrationPool(back), pool) {
		t.Fatalf("calibration not restored: %v", err)
	}

	// the same λ twice: with a limit above the samples the second learn
	// keeps the factor, with 0 it refactors (the default at this m is 1)
	for _, limit := range []int{1000, 0} {
		c, err := flycl.New(cfg, d)
		if err != nil {
			t.Fatal(err)
		}
		SetUpdateLimit(c, limit)
		var rec flycl.TaskRecord
		for _, lo := range []int{0, n / 2} {
			if rec, err = c.Learn(ctx, x[lo*d:(lo+4)*d], y[lo:lo+4], &flycl.LearnOptions{Lambda: 1}); err != nil {
				t.Fatal(err)
			}
		}
		if rec.FactorUpdated != (limit != 0) {
			t.Errorf("update limit %d: factor updated %v", limit, rec.FactorUpdated)
		}
	}
}

// TestExpandAndBatchPredictor checks Expand and both predictors against
// scores computed in float64 from Expand's codes h and the classifier C
// (a snapshot's Coef): score = h·c_j. Each float32 score is a sum of m
// products, so it may differ from the float64 one by at most about
// m·2⁻²⁴·Σ|h_i c_ji| (the standard bound on a recursive or blocked dot
// product); the test allows that bound. The batch predictor (sgemm) and
// the row-exact predictor must both meet it and predict the same labels
// where the two best scores are farther apart than twice the bound.
func TestExpandAndBatchPredictor(t *testing.T) {
	ctx := context.Background()
	const d, n, mm = 12, 300, 400
	m, err := flycl.New(flycl.Config{M: mm, P: 5, K: 80, Seed: 9, Lambdas: []float64{0.1, 1, 10}}, d)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	x, y := make([]float32, n*d), make([]int, n)
	for i := range y {
		y[i] = 10 + i%3
		for j := range d {
			x[i*d+j] = float32(r.NormFloat64()) + float32(2*(y[i]-10)*(j%3))
		}
	}
	if _, err := m.Learn(ctx, x, y, nil); err != nil {
		t.Fatal(err)
	}
	h, err := Expand(ctx, m, x)
	if err != nil || len(h) != n*mm {
		t.Fatalf("Expand: %d values, %v", len(h), err)
	}
	coef, labels := m.Snapshot().Coef(), m.Classes().Labels()
	nc := len(labels)
	want, bound := make([]float64, n*nc), make([]float64, n*nc)
	for i := range n {
		for c := range nc {
			var s, a float64
			for k := range mm {
				p := float64(h[i*mm+k]) * float64(coef[c*mm+k])
				s, a = s+p, a+math.Abs(p)
			}
			want[i*nc+c], bound[i*nc+c] = s, mm*0x1p-24*a
		}
	}
	batch, exact := BatchPredictor(m), m.Predictor()
	for name, p := range map[string]*flycl.Predictor{"batch": batch, "row-exact": exact} {
		got, err := p.Scores(ctx, x)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if e := math.Abs(float64(v) - want[i]); !(e <= bound[i]) {
				t.Fatalf("%s: score %d is %v, float64 %v: error %.3g over the bound %.3g", name, i, v, want[i], e, bound[i])
			}
		}
	}
	pb, err := batch.Predict(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	pe, err := exact.Predict(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		row, b := want[i*nc:(i+1)*nc], bound[i*nc:(i+1)*nc]
		best, second := 0, -1
		for c := 1; c < nc; c++ {
			if row[c] > row[best] {
				best, second = c, best
			} else if second < 0 || row[c] > row[second] {
				second = c
			}
		}
		if row[best]-row[second] > 2*(b[best]+b[second]) && (pb[i] != labels[best] || pe[i] != labels[best]) {
			t.Fatalf("sample %d: batch predicts %d, row-exact %d, float64 %d", i, pb[i], pe[i], labels[best])
		}
	}
	ab, err := batch.Accuracy(ctx, x, y)
	if err != nil {
		t.Fatal(err)
	}
	hit := 0
	for i := range pb {
		if pb[i] == y[i] {
			hit++
		}
	}
	if ab != float64(hit)/n {
		t.Fatalf("batch accuracy %v, its predictions give %v", ab, float64(hit)/n)
	}
}
