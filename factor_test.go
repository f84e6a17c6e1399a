package flycl

import (
	"context"
	"math"
	"testing"

	"github.com/flycl/flycl/linalg"
	"github.com/flycl/flycl/ridge"
)

// coefBound is the first-order bound on the relative difference of two
// classifiers solved from two float32 factors of the same A = G + λI
// (the models' G are the same bits: both add the same codes in the same
// order): each factor is exact for A + E with |E_ij| ≤ γ̃·d_i·d_j (d_i =
// √A_ii, γ̃ = DriftTolerance/4, see ridge.DriftTolerance; an updated factor
// is held to it by the drift check) and each pair of triangular solves
// adds 2γ̃·d_i·d_j more, so ‖E‖₂ ≤ 3γ̃·tr(A) and the two solutions differ
// by at most 2·κ(A)·3γ̃·tr(A)/‖A‖₂ relative.
func coefBound(t *testing.T, m *Model) float64 {
	t.Helper()
	mm := m.cfg.M
	a := make([]float64, mm*mm)
	var tr float64
	for i := 0; i < mm; i++ {
		for j := 0; j <= i; j++ {
			a[i*mm+j] = float64(m.acc.G(i, j))
			a[j*mm+i] = a[i*mm+j]
		}
		a[i*mm+i] += m.lambda
		tr += a[i*mm+i]
	}
	w := make([]float64, mm)
	if err := linalg.Dsyevd(false, mm, a, mm, w); err != nil {
		t.Fatal(err)
	}
	g := ridge.DriftTolerance(mm) / 4
	return 2 * w[mm-1] / w[0] * 3 * g * tr / w[mm-1]
}

// TestUpdatePathMatchesRefactor learns the same sequence of small learns
// (GCV per learn, a fixed λ, online batches, and a forget: the data of the
// learn, forget and online exactness tests) into two models, one updating
// its factor by each learn's rank-n term, one refactoring every time
// (SetUpdateLimit(0)). The λ of every step must be the same, the updating
// model must have updated on the steps whose λ did not change, the
// predicted class of every test sample must be identical, and the
// classifiers within coefBound.
func TestUpdatePathMatchesRefactor(t *testing.T) {
	ctx := context.Background()
	const d = 16
	type step struct {
		x      []float32
		y      []int
		lambda float64 // 0: GCV
		online bool
		forget int // label to forget (x: its samples), -1: learn
	}
	type tc struct {
		name  string
		cfg   Config
		steps func() []step
	}
	learns := func(lambda float64, online bool) func() []step {
		return func() []step {
			var out []step
			for i, cls := range [][]int{{0, 1}, {2}, {3, 4}, {1, 5}, {6}, {0, 7}} {
				x, y := clusters(uint64(40+i), 20, d, cls, 0.9)
				out = append(out, step{x: x, y: y, lambda: lambda, online: online, forget: -1})
			}
			return out
		}
	}
	cases := []tc{
		{"gcv per learn", small, learns(0, false)},
		{"fixed lambda", small, learns(50, false)},
		{"online gcv", small, learns(0, true)},
		{"forget", Config{M: 200, P: 6, K: 60, Seed: 9, Lambdas: []float64{0.1, 1, 10, 100}}, func() []step {
			var out []step
			for i, cls := range [][]int{{0, 1}, {2}, {3, 4}, {5}} {
				x, y := clusters(uint64(40+i), 10*len(cls), d, cls, 0.9)
				out = append(out, step{x: x, y: y, lambda: 10, forget: -1})
			}
			out = append(out, step{x: out[1].x, forget: 2}, step{x: out[3].x, forget: 5})
			return out
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			upd, _ := New(c.cfg, d)
			ref, _ := New(c.cfg, d)
			upd.setUpdateLimit(1000)
			ref.setUpdateLimit(0)
			updated := 0
			for i, s := range c.steps() {
				var ru, rr TaskRecord
				var eu, er error
				switch {
				case s.forget >= 0:
					ru, eu = upd.Forget(ctx, s.forget, s.x)
					rr, er = ref.Forget(ctx, s.forget, s.x)
				case s.online:
					ru, eu = upd.Learn(ctx, s.x, s.y, &LearnOptions{Lambda: s.lambda})
					rr, er = ref.Learn(ctx, s.x, s.y, &LearnOptions{Lambda: s.lambda})
				case s.lambda > 0:
					ru, eu = upd.Learn(ctx, s.x, s.y, &LearnOptions{Lambda: s.lambda})
					rr, er = ref.Learn(ctx, s.x, s.y, &LearnOptions{Lambda: s.lambda})
				default:
					ru, eu = upd.Learn(ctx, s.x, s.y, nil)
					rr, er = ref.Learn(ctx, s.x, s.y, nil)
				}
				if eu != nil || er != nil {
					t.Fatalf("step %d: %v / %v", i, eu, er)
				}
				if ru.Lambda != rr.Lambda {
					t.Fatalf("step %d: λ %g (update path) vs %g (refactor path)", i, ru.Lambda, rr.Lambda)
				}
				if rr.FactorUpdated {
					t.Fatalf("step %d: the refactoring model updated", i)
				}
				if ru.FactorUpdated {
					updated++
				}
				if i > 0 && ru.FactorUpdated != (upd.History()[i-1].Lambda == ru.Lambda) && s.forget < 0 {
					t.Errorf("step %d: updated %v, λ %g after %g", i, ru.FactorUpdated, ru.Lambda, upd.History()[i-1].Lambda)
				}
			}
			if updated == 0 {
				t.Fatal("no step took the update path")
			}
			tx, _ := clusters(99, 200, d, upd.Classes().Labels(), 1.2)
			pu, err := upd.Predictor().Predict(ctx, tx)
			if err != nil {
				t.Fatal(err)
			}
			pr, _ := ref.Predictor().Predict(ctx, tx)
			for i := range pu {
				if pu[i] != pr[i] {
					t.Errorf("test sample %d: predicted %d on the update path, %d refactoring", i, pu[i], pr[i])
				}
			}
			var dd, nn float64
			for i, v := range ref.coef {
				e := float64(upd.coef[i]) - float64(v)
				dd += e * e
				nn += float64(v) * float64(v)
			}
			rel, bound := math.Sqrt(dd/nn), coefBound(t, ref)
			if !(rel <= bound) {
				t.Errorf("classifiers differ by %.3g relative, bound %.3g", rel, bound)
			}
			t.Logf("%d of %d steps updated; classifiers differ by %.3g relative (bound %.3g)", updated, len(upd.History()), rel, bound)
		})
	}
}

func TestLambdaPolicyText(t *testing.T) {
	for _, p := range []LambdaPolicy{LambdaGCV, LambdaKeep} {
		b, _ := p.MarshalText()
		var q LambdaPolicy
		if err := q.UnmarshalText(b); err != nil || q != p {
			t.Errorf("%v: round trip gave %v, %v", p, q, err)
		}
	}
	var q LambdaPolicy
	if err := q.UnmarshalText([]byte("fixed")); err == nil {
		t.Error("unknown policy accepted")
	}
	// Under LambdaKeep the first learn chooses λ by GCV; a later learn
	// keeps it (no GCV), where LambdaGCV scores λ again.
	ctx := context.Background()
	m, _ := New(small, 16)
	x, y := clusters(1, 30, 16, []int{0, 1}, 0.9)
	rec, err := m.Learn(ctx, x, y, &LearnOptions{Policy: LambdaKeep})
	if err != nil {
		t.Fatal(err)
	}
	if rec.GCV == nil {
		t.Error("an untrained model keeps a λ")
	}
	x2, y2 := clusters(2, 30, 16, []int{2, 3}, 0.9)
	kept, err := m.Clone().Learn(ctx, x2, y2, &LearnOptions{Policy: LambdaKeep})
	if err != nil {
		t.Fatal(err)
	}
	again, err := m.Clone().Learn(ctx, x2, y2, &LearnOptions{Policy: LambdaGCV})
	if err != nil {
		t.Fatal(err)
	}
	if kept.Lambda != rec.Lambda || kept.GCV != nil || again.GCV == nil {
		t.Errorf("kept λ %g (GCV run: %v) / GCV run: %v after learning with λ %g", kept.Lambda, kept.GCV != nil, again.GCV != nil, rec.Lambda)
	}
}
