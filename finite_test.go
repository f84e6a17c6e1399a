package flycl

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl/ridge"
)

// sameModel reports whether two snapshots hold the same state bit for
// bit: classes, counts, λ, version, classifier and S. G is compared with
// a tolerance by the callers that undo a step (see mark).
func sameModel(t *testing.T, what string, a, b *Snapshot) {
	t.Helper()
	sa, sb := a.State(), b.State()
	if !slices.Equal(sa.Labels, sb.Labels) || !slices.Equal(sa.Counts, sb.Counts) || sa.Lambda != sb.Lambda ||
		sa.Version != sb.Version || !sameFloats(sa.Coef, sb.Coef) || !sameFloats(a.S(), b.S()) ||
		a.Samples() != b.Samples() || len(sa.History) != len(sb.History) || sa.InputScale != sb.InputScale {
		t.Fatalf("%s changed the model: labels %v→%v counts %v→%v λ %g→%g version %d→%d samples %d→%d",
			what, sa.Labels, sb.Labels, sa.Counts, sb.Counts, sa.Lambda, sb.Lambda, sa.Version, sb.Version, a.Samples(), b.Samples())
	}
	for i := 0; i < sa.Config.M; i++ {
		if !sameFloats(a.lowerRow(i), b.lowerRow(i)) {
			t.Fatalf("%s changed row %d of G", what, i)
		}
	}
}

// TestHugeFeaturesRefused: finite features whose codes' squares float32
// cannot hold (scale 1e20: codes about 1e20, squares 1e40 > 3.4e38) are
// refused by every way of learning, with an error naming the cause, and
// leave the model exactly as it was; before, LearnTask succeeded with a
// NaN classifier that no model file could load. With LambdaRelative the
// inputs are scaled by a power of two and the same features learn.
func TestHugeFeaturesRefused(t *testing.T) {
	ctx := context.Background()
	const d = 16
	cfg := Config{M: 300, P: 6, K: 40, Seed: 2, Lambdas: []float64{0.1, 1, 10}}
	x0, y0 := clusters(1, 40, d, []int{0, 1}, 0.5)
	for _, scale := range []float64{1e20, 1e30} {
		x, y := clusters(2, 40, d, []int{1, 2}, 0.5)
		for i := range x {
			x[i] = float32(float64(x[i]) * scale)
		}
		for _, tc := range []struct {
			name  string
			learn func(m *Model) error
		}{
			{"LearnTask", func(m *Model) error { _, err := m.Learn(ctx, x, y, nil); return err }},
			{"LearnBatch", func(m *Model) error { _, err := m.Learn(ctx, x, y, &LearnOptions{Lambda: 1}); return err }},
			{"LearnTaskWithLambda", func(m *Model) error { _, err := m.Learn(ctx, x, y, &LearnOptions{Lambda: 1}); return err }},
			{"LearnStats", func(m *Model) error {
				// TaskStats keeps float64 statistics (no overflow there);
				// the model's float32 G cannot hold them.
				st, err := m.TaskStats(ctx, x, y)
				if err != nil {
					return err
				}
				_, err = m.Learn(ctx, nil, nil, &LearnOptions{Stats: st})
				return err
			}},
		} {
			m, _ := New(cfg, d)
			if _, err := m.Learn(ctx, x0, y0, nil); err != nil {
				t.Fatal(err)
			}
			before := m.Snapshot()
			err := tc.learn(m)
			if err == nil || !strings.Contains(err.Error(), "too large for float32") {
				t.Fatalf("scale %g %s: err = %v, want features too large", scale, tc.name, err)
			}
			sameModel(t, tc.name, before, m.Snapshot())
			if err := m.Snapshot().Validate(); err != nil {
				t.Fatalf("%s: model no longer valid: %v", tc.name, err)
			}
		}
		rel := cfg
		rel.LambdaScale, rel.Lambdas = LambdaRelative, nil
		m, _ := New(rel, d)
		if _, err := m.Learn(ctx, x, y, nil); err != nil {
			t.Fatalf("scale %g with relative λ: %v", scale, err)
		}
		if err := m.Snapshot().Validate(); err != nil {
			t.Fatalf("scale %g with relative λ: %v", scale, err)
		}
	}
}

// TestSolveFailureRollsBack: when the re-solve fails after the statistics
// took the task in (here codes of about 1e17, within GramLimit, with
// λ = 1e-30: G + λI cannot be factored in float32 even with λ raised 39
// decades, or the classifier overflows), LearnTaskWithLambda and
// LearnStats take the task back out: the class map, counts, S, λ and the
// classifier are as before, and G is within float32 rounding of before.
func TestSolveFailureRollsBack(t *testing.T) {
	ctx := context.Background()
	const d = 8
	cfg := Config{M: 40, P: 4, K: 40, Seed: 1, Lambdas: []float64{1e-30}}
	x0, y0 := clusters(1, 30, d, []int{0, 1}, 0.5)
	x, y := clusters(2, 3, d, []int{5}, 0.5)
	for i := range x {
		x[i] *= 1e17
	}
	for _, name := range []string{"LearnTaskWithLambda", "LearnStats"} {
		m, _ := New(cfg, d)
		if _, err := m.Learn(ctx, x0, y0, &LearnOptions{Lambda: 1}); err != nil {
			t.Fatal(err)
		}
		before := m.Snapshot()
		var err error
		if name == "LearnStats" {
			var st *ridge.Stats
			if st, err = m.TaskStats(ctx, x, y); err == nil {
				_, err = m.Learn(ctx, nil, nil, &LearnOptions{Stats: st, Lambda: 1e-30})
			}
		} else {
			_, err = m.Learn(ctx, x, y, &LearnOptions{Lambda: 1e-30})
		}
		if err == nil {
			t.Fatalf("%s: the solve did not fail", name)
		}
		t.Logf("%s: %v", name, err)
		after := m.Snapshot()
		sa, sb := before.State(), after.State()
		if !slices.Equal(sa.Labels, sb.Labels) || !slices.Equal(sa.Counts, sb.Counts) || sa.Lambda != sb.Lambda ||
			sa.Version != sb.Version || !sameFloats(sa.Coef, sb.Coef) || !sameFloats(before.S(), after.S()) || before.Samples() != after.Samples() {
			t.Fatalf("%s: a failed step changed the model", name)
		}
		// G: the task was added and subtracted again in float32 (LearnStats:
		// float64 rounded once each way); each element is within 2u of the
		// task's own contribution |G_task| ≤ max diag of the task's G.
		var big float64
		h, _ := m.expandCodes(ctx, x)
		for j := 0; j < cfg.M; j++ {
			var s float64
			for i := 0; i < 3; i++ {
				s += float64(h[i*cfg.M+j]) * float64(h[i*cfg.M+j])
			}
			big = max(big, s)
		}
		u := math.Ldexp(1, -24)
		for i := 0; i < cfg.M; i++ {
			ra, rb := before.lowerRow(i), after.lowerRow(i)
			for j := range ra {
				if diff := math.Abs(float64(ra[j]) - float64(rb[j])); diff > 4*u*big {
					t.Fatalf("%s: G[%d][%d] %g → %g", name, i, j, ra[j], rb[j])
				}
			}
		}
	}
}

// TestSnapshotValidate: Validate refuses what NewSnapshot refuses, so an
// encoder never writes a model its decoder cannot read.
func TestSnapshotValidate(t *testing.T) {
	ctx := context.Background()
	m, _ := New(Config{M: 50, P: 4, K: 20, Lambdas: []float64{1}}, 8)
	x, y := clusters(1, 20, 8, []int{0, 1}, 0.5)
	if _, err := m.Learn(ctx, x, y, nil); err != nil {
		t.Fatal(err)
	}
	s := m.Snapshot()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := &Snapshot{st: s.State(), w: s.w, g: s.g, s: s.s, samples: s.samples}
	bad.st.Coef[3] = float32(math.NaN())
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Fatalf("NaN classifier: %v", err)
	}
	bad = &Snapshot{st: s.State(), w: s.w, g: slices.Clone(s.g), s: s.s, samples: s.samples}
	bad.g[2] = -1 // G[1][1]
	if err := bad.Validate(); err == nil {
		t.Fatal("negative diagonal passes")
	}
	if err := (&Snapshot{}).Validate(); err == nil {
		t.Fatal("empty snapshot passes")
	}
}

// TestLabelsForAtomic: when LabelsFor fails part-way (a numeric name
// whose label is named otherwise), the names it attached before the
// failure are taken back.
func TestLabelsForAtomic(t *testing.T) {
	m, _ := New(Config{M: 20, P: 2, K: 10, Lambdas: []float64{1}}, 4)
	if err := m.SetClassName(7, "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.LabelsFor([]string{"new", "7"}); err == nil {
		t.Fatal("numeric name of a label named otherwise: no error")
	}
	// "new" would have gone to label 8: the class named by the number 8
	// must still be free to take.
	if l, err := m.LabelsFor([]string{"8", "x"}); err != nil || l[0] != 8 || l[1] != 7 {
		t.Fatalf("after a failed LabelsFor: %v %v (a name left attached?)", l, err)
	}
}

// TestScoresNotFinite: features so large that their expansion overflows
// float32 (3e38 in every dimension: the float64 sum of a row of W times
// them exceeds the largest float32, checked below) give Scores, Predict
// and Top an error naming the sample and the non-finite score, from both
// the model and its Predictor, instead of NaN scores; the same call
// without that sample scores normally.
func TestScoresNotFinite(t *testing.T) {
	ctx := context.Background()
	const d = 16
	m, err := New(Config{M: 300, P: 6, K: 40, Seed: 2, Lambdas: []float64{0.1, 1, 10}}, d)
	if err != nil {
		t.Fatal(err)
	}
	x, y := clusters(1, 40, d, []int{0, 1}, 0.5)
	if _, err := m.Learn(ctx, x, y, nil); err != nil {
		t.Fatal(err)
	}
	huge := slices.Repeat([]float32{3e38}, d)
	w := m.w
	over := false
	for i := 0; i < w.M && !over; i++ {
		var s float64
		for j := 0; j < w.P; j++ {
			s += float64(w.Vals[i*w.P+j]) * 3e38
		}
		over = math.Abs(s) > math.MaxFloat32
	}
	if !over {
		t.Fatal("test premise: no code of the huge sample overflows float32")
	}
	probe := slices.Concat(x[:d], huge)
	p := m.Predictor()
	for _, tc := range []struct {
		name string
		call func(x []float32) error
	}{
		{"Predictor.Scores", func(x []float32) error { _, err := p.Scores(ctx, x); return err }},
		{"Predictor.Predict", func(x []float32) error { _, err := p.Predict(ctx, x); return err }},
		{"Predictor.Top", func(x []float32) error { _, err := p.Top(ctx, x, 2); return err }},
	} {
		err := tc.call(probe)
		if err == nil || !strings.Contains(err.Error(), "sample 1") || !strings.Contains(err.Error(), "not a finite number") {
			t.Errorf("%s of a 3e38 sample: %v, want an error naming sample 1's non-finite score", tc.name, err)
		}
		if err := tc.call(x[:2*d]); err != nil {
			t.Errorf("%s of ordinary samples: %v", tc.name, err)
		}
	}
}
