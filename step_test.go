package flycl

import (
	"context"
	"errors"
	"maps"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/flycl/flycl/linalg"
)

// TestFailedSolveRollsBackEveryStep: every kind of step (a task, a
// batch, a task's statistics, a forgotten class, unlearned samples) whose
// re-solve fails after its statistics were changed leaves the model as it
// was: its whole State (class map, names, counts, input scale, λ, the
// classifier, history, version) and S and the sample count bit for bit,
// G within the float32 rounding of adding and subtracting the step.
//
// The failure is forced with λ = 1e-300 and a relative grid (whose solve
// raises λ by factors of 10 only, so 40 tries reach 1e-261): top-k keeps
// K = 4 of M = 40 coordinates of a handful of samples, so some coordinate
// of G is exactly 0, its pivot in G + λI is float32(0 + λ) = 0, and the
// Cholesky factorisation fails at every λ tried. The first learn of a
// relative model also fixes its input scale; the rollback must clear it.
func TestFailedSolveRollsBackEveryStep(t *testing.T) {
	ctx := context.Background()
	const d, tiny = 8, 1e-300
	cfg := Config{M: 40, P: 4, K: 4, Seed: 5, LambdaScale: LambdaRelative, Lambdas: []float64{tiny}}
	x0, y0 := clusters(1, 4, d, []int{0, 1}, 0.5)
	x1, y1 := clusters(2, 3, d, []int{2}, 0.5)
	// trained returns a model that learned {0,1} and {2} with λ = 1 (which
	// the solve raises as far as it must), named classes included.
	trained := func(t *testing.T) *Model {
		m, _ := New(cfg, d)
		for _, tk := range []struct {
			x []float32
			y []int
		}{{x0, y0}, {x1, y1}} {
			if _, err := m.Learn(ctx, tk.x, tk.y, &LearnOptions{Lambda: 1}); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.SetClassName(2, "two"); err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, tc := range []struct {
		name string
		// model returns the model before the step; step runs it and
		// returns the codes it added or took away (as the step computed
		// them, for the bound on G).
		model func(t *testing.T) *Model
		step  func(m *Model) (codes []float32, err error)
	}{
		{"first LearnTask (GCV)", func(*testing.T) *Model { m, _ := New(cfg, d); return m },
			func(m *Model) ([]float32, error) {
				_, err := m.Learn(ctx, x0, y0, nil)
				return codesAt(m, x0, inputScaleFor(x0)), err
			}},
		{"first LearnTaskWithLambda", func(*testing.T) *Model { m, _ := New(cfg, d); return m },
			func(m *Model) ([]float32, error) {
				_, err := m.Learn(ctx, x0, y0, &LearnOptions{Lambda: tiny})
				return codesAt(m, x0, inputScaleFor(x0)), err
			}},
		{"LearnBatch", trained, func(m *Model) ([]float32, error) {
			x, y := clusters(3, 3, d, []int{1, 7}, 0.5)
			_, err := m.Learn(ctx, x, y, &LearnOptions{Lambda: tiny})
			return codesAt(m, x, m.inputScale()), err
		}},
		{"first LearnStats", func(*testing.T) *Model { m, _ := New(cfg, d); return m },
			func(m *Model) ([]float32, error) {
				st, err := m.TaskStats(ctx, x0, y0)
				if err != nil {
					return nil, err
				}
				_, err = m.Learn(ctx, nil, nil, &LearnOptions{Stats: st, Lambda: tiny})
				return codesAt(m, x0, 1), err
			}},
		{"Forget", func(t *testing.T) *Model {
			m := trained(t)
			// The λ Forget re-solves with is that of the latest step with
			// another class (lambdaWithout): no learn can choose a λ that
			// fails, so it is planted in the history.
			m.hist[0].Lambda, m.hist[0].RaisedFrom = tiny, 0
			return m
		}, func(m *Model) ([]float32, error) {
			_, err := m.Forget(ctx, 2, x1)
			return codesAt(m, x1, m.inputScale()), err
		}},
		{"Unlearn", trained, func(m *Model) ([]float32, error) {
			// all of class 2 (removed: its row of S goes) and one sample of class 0
			x := slices.Concat(x1, x0[:d])
			y := append(slices.Clone(y1), y0[0])
			_, err := m.Unlearn(ctx, x, y, tiny)
			return codesAt(m, x, m.inputScale()), err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.model(t)
			before, index := m.Snapshot(), maps.Clone(m.index)
			h, err := tc.step(m)
			var npd *linalg.NotPositiveDefiniteError
			if !errors.As(err, &npd) {
				t.Fatalf("err = %v, want the solve's failure to factor G + λI", err)
			}
			after := m.Snapshot()
			if sb, sa := before.State(), after.State(); !reflect.DeepEqual(sb, sa) {
				t.Fatalf("state changed:\nbefore %+v\nafter  %+v", sb, sa)
			}
			if !maps.Equal(index, m.index) {
				t.Fatalf("class index %v → %v", index, m.index)
			}
			if !sameFloats(before.S(), after.S()) || before.Samples() != after.Samples() {
				t.Fatalf("S or the sample count changed (%d → %d samples)", before.Samples(), after.Samples())
			}
			// G: fl(fl(G + T) − T) with T = HᵀH, the step's n-sample Gram,
			// computed in float32 each way: two roundings of the sum and
			// the n-term products' own (γ_n ≈ n·u each way) bound every
			// element by (2 + 2n)·u·(|G| + |T|), and |G_ij|, |T_ij| are at
			// most their largest diagonal entries (Cauchy–Schwarz).
			n := len(h) / cfg.M
			var gmax, tmax float64
			for j := 0; j < cfg.M; j++ {
				gmax = max(gmax, float64(before.lowerRow(j)[j]))
				var s float64
				for i := 0; i < n; i++ {
					s += float64(h[i*cfg.M+j]) * float64(h[i*cfg.M+j])
				}
				tmax = max(tmax, s)
			}
			tol := float64(2+2*n) * math.Ldexp(1, -24) * (gmax + tmax)
			for i := 0; i < cfg.M; i++ {
				rb, ra := before.lowerRow(i), after.lowerRow(i)
				for j := range rb {
					if diff := math.Abs(float64(ra[j]) - float64(rb[j])); diff > tol {
						t.Fatalf("G[%d][%d] %g → %g (more than %g)", i, j, rb[j], ra[j], tol)
					}
				}
			}
			// and the model still learns
			if _, err := m.Learn(ctx, x0, y0, &LearnOptions{Lambda: 1}); err != nil {
				t.Fatalf("learn after the rollback: %v", err)
			}
		})
	}
}

// codesAt returns the codes of x times scale (a power of two) under m's
// W and top-k: what a step of m computed for x.
func codesAt(m *Model, x []float32, scale float64) []float32 {
	xs := slices.Clone(x)
	for i := range xs {
		xs[i] *= float32(scale)
	}
	saved := m.inScale
	m.inScale = 0
	defer func() { m.inScale = saved }()
	h, err := m.expandCodes(context.Background(), xs)
	if err != nil {
		panic(err)
	}
	return h
}

// TestFailedStepBeforeStatistics: a step refused before its statistics
// change (GCV cancelled; statistics float32 cannot hold) leaves the model
// bit for bit as it was, G included, with no new class registered.
func TestFailedStepBeforeStatistics(t *testing.T) {
	const d = 8
	cfg := Config{M: 40, P: 4, K: 10, Seed: 6, Lambdas: []float64{0.1, 1, 10}}
	x0, y0 := clusters(1, 12, d, []int{0, 1}, 0.5)
	x1, y1 := clusters(2, 6, d, []int{2, 3}, 0.5)
	for _, tc := range []struct {
		name string
		step func(m *Model) error
	}{
		{"LearnStats, cancelled GCV", func(m *Model) error {
			st, err := m.TaskStats(context.Background(), x1, y1)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err = m.Learn(ctx, nil, nil, &LearnOptions{Stats: st})
			return err
		}},
		{"LearnStats, S beyond float32", func(m *Model) error {
			st, err := m.TaskStats(context.Background(), x1, y1)
			if err != nil {
				return err
			}
			st.S[0] = 1e39 // finite in float64, not in float32: AddStats refuses it
			_, err = m.Learn(context.Background(), nil, nil, &LearnOptions{Stats: st, Lambda: 1})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := New(cfg, d)
			if _, err := m.Learn(context.Background(), x0, y0, nil); err != nil {
				t.Fatal(err)
			}
			before := m.Snapshot()
			if err := tc.step(m); err == nil {
				t.Fatal("the step did not fail")
			} else {
				t.Log(err)
			}
			sameModel(t, tc.name, before, m.Snapshot())
			if !reflect.DeepEqual(before.State(), m.Snapshot().State()) || len(m.index) != 2 {
				t.Fatalf("state changed: %+v", m.Snapshot().State())
			}
		})
	}
}
