package flycl

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/flycl/flycl/ridge"
	"gonum.org/v1/gonum/mat"
)

// bruteGCV returns the GCV curve of ridge regression of the one-hot
// labels y on the n×m codes h, in float64 from the SVD of h (an
// independent computation of ridge's GCV): GCV(λ) = ‖(I−A)Y‖²/n /
// (1 − tr A/n)², A = H(HᵀH + λI)⁻¹Hᵀ = U diag(s²/(s²+λ)) Uᵀ.
func bruteGCV(h []float32, n, m int, y []int) func(lambda float64) float64 {
	hd := mat.NewDense(n, m, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			hd.Set(i, j, float64(h[i*m+j]))
		}
	}
	var svd mat.SVD
	svd.Factorize(hd, mat.SVDThin)
	var u mat.Dense
	svd.UTo(&u)
	s := svd.Values(nil)
	cls := slices.Sorted(slices.Values(slices.Compact(slices.Sorted(slices.Values(y)))))
	y1 := mat.NewDense(n, len(cls), nil)
	for i, l := range y {
		y1.Set(i, slices.Index(cls, l), 1)
	}
	var uty mat.Dense
	uty.Mul(u.T(), y1)
	return func(lambda float64) float64 {
		f := mat.DenseCopyOf(&uty)
		df := 0.0
		for i := range s {
			g := s[i] * s[i] / (s[i]*s[i] + lambda)
			df += g
			for c := 0; c < len(cls); c++ {
				f.Set(i, c, f.At(i, c)*g)
			}
		}
		var yhat, r mat.Dense
		yhat.Mul(&u, f)
		r.Sub(y1, &yhat)
		nrm := mat.Norm(&r, 2)
		den := 1 - df/float64(n)
		return nrm * nrm / float64(n) / (den * den)
	}
}

// widenProblem is a task of noisy clusters, its codes and the λ that
// minimises its GCV curve, found by brute force on a fine grid (0.01
// decade) from 10⁻⁶ to 10¹² times the mean diagonal of HᵀH.
func widenProblem(t *testing.T) (m *Model, x []float32, y []int, gcv func(float64) float64, opt, scale float64) {
	t.Helper()
	const d, n = 16, 60
	cfg := small
	m, err := New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	x, y = clusters(71, n, d, []int{0, 1, 2}, 2.5)
	h, err := m.expandCodes(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	var tr float64
	for _, v := range h {
		tr += float64(v) * float64(v)
	}
	scale = tr / float64(cfg.M)
	gcv = bruteGCV(h, n, cfg.M, y)
	best := math.Inf(1)
	for e := -6.0; e <= 12; e += 0.01 {
		if v := gcv(scale * math.Pow(10, e)); v < best {
			best, opt = v, scale*math.Pow(10, e)
		}
	}
	if opt <= scale*1e-5 || opt >= scale*1e11 {
		t.Fatalf("the test problem's GCV optimum %g (scale %g) is not interior: fix the problem", opt, scale)
	}
	return m, x, y, gcv, opt, scale
}

// TestWidenLambdas widens grids placed below, above and around the known
// optimum of a GCV curve.
func TestWidenLambdas(t *testing.T) {
	_, _, _, gcv, opt, _ := widenProblem(t)
	score := func(calls *int) func(context.Context, []float64) ([]float64, error) {
		return func(_ context.Context, g []float64) ([]float64, error) {
			*calls++
			out := make([]float64, len(g))
			for i, l := range g {
				out[i] = gcv(l)
			}
			return out, nil
		}
	}
	for _, c := range []struct {
		name  string
		grid  []float64 // times opt
		calls int       // calls of score, the first included
	}{
		{"below", []float64{1e-4, 1e-3}, 3},    // +2, +2 decades above
		{"above", []float64{1e3, 1e4, 1e5}, 3}, // -2, -2 decades below
		{"around", []float64{1e-2, 1e-1, 1, 10, 100}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			grid := make([]float64, len(c.grid))
			for i, g := range c.grid {
				grid[i] = g * opt
			}
			calls := 0
			sc, _ := score(&calls)(context.Background(), grid)
			g, s, err := widenLambdas(context.Background(), grid, sc, score(&calls))
			if err != nil {
				t.Fatal(err)
			}
			if calls != c.calls {
				t.Errorf("%d calls of score, want %d", calls, c.calls)
			}
			if !slices.IsSorted(g) || len(s) != len(g) {
				t.Fatalf("grid %v (scores %v) not ascending or not matched", g, s)
			}
			if added := len(g) - len(grid); added > 2*MaxWiden {
				t.Errorf("%d values added, more than 2·MaxWiden", added)
			}
			for i, l := range g { // the scores belong to their λ
				if s[i] != gcv(l) {
					t.Errorf("score of %g: %g, want %g", l, s[i], gcv(l))
				}
			}
			b := ridge.BestLambda(s)
			issue := LambdaCheck(g, s, g[b])
			if issue != "" {
				t.Fatalf("widened grid %v: %s", g, issue)
			}
			// the true optimum lies between the chosen λ's neighbours (the
			// curve is unimodal on this problem)
			if !(g[b-1] < opt && opt < g[b+1]) {
				t.Errorf("chose %g, neighbours %g and %g do not bracket the optimum %g", g[b], g[b-1], g[b+1], opt)
			}
		})
	}
}

// TestWidenBound widens a curve whose optimum is at λ → 0 (GCV(λ) = λ):
// exactly MaxWiden decades are added below, WidenStep at a time, and the
// choice stays at the edge.
func TestWidenBound(t *testing.T) {
	calls := 0
	score := func(_ context.Context, g []float64) ([]float64, error) {
		calls++
		return slices.Clone(g), nil
	}
	grid := []float64{1, 10, 100}
	g, s, err := widenLambdas(context.Background(), grid, slices.Clone(grid), score)
	if err != nil {
		t.Fatal(err)
	}
	if want := (MaxWiden + WidenStep - 1) / WidenStep; calls != want {
		t.Errorf("%d calls, want %d", calls, want)
	}
	if len(g) != len(grid)+MaxWiden || math.Abs(g[0]-math.Pow10(-MaxWiden)) > 1e-9*g[0] {
		t.Errorf("grid %v: want %d decades added below 1", g, MaxWiden)
	}
	if issue := LambdaCheck(g, s, g[ridge.BestLambda(s)]); issue != LambdaLowEdge {
		t.Errorf("issue %q, want %q", issue, LambdaLowEdge)
	}
}

// TestWidenGridLearn learns the problem with a relative grid far above
// the optimum: with WidenGrid the model's λ is the brute-force GCV minimum
// over the widened grid, inside it; without, it is the grid's low edge.
func TestWidenGridLearn(t *testing.T) {
	_, x, y, _, opt, scale := widenProblem(t)
	// a relative grid 3 to 4 decades above the optimum
	hi := math.Round(math.Log10(opt/scale)) + 3
	for _, widen := range []bool{false, true} {
		cfg := small
		cfg.LambdaScale, cfg.WidenGrid = LambdaRelative, widen
		cfg.Lambdas = []float64{math.Pow(10, hi), math.Pow(10, hi+1)}
		m, err := New(cfg, 16)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := m.Learn(context.Background(), x, y, nil)
		if err != nil {
			t.Fatal(err)
		}
		// the model's codes (its input scale applied) give its GCV curve
		h, err := m.expandCodes(context.Background(), x)
		if err != nil {
			t.Fatal(err)
		}
		gcv := bruteGCV(h, len(y), cfg.M, y)
		issue := rec.LambdaIssue()
		if !widen {
			if issue != LambdaLowEdge {
				t.Errorf("fixed grid: issue %q, want %q", issue, LambdaLowEdge)
			}
			continue
		}
		if issue != "" {
			t.Fatalf("widened grid %v: %s", rec.Grid, issue)
		}
		// GCV is computed in float32 with float64 sums (relative error
		// ~1e-6): the brute-force best must score within 1e-4 of the
		// model's choice
		best := rec.Grid[0]
		for _, l := range rec.Grid {
			if gcv(l) < gcv(best) {
				best = l
			}
		}
		if got := rec.Lambda; got != best && gcv(got) > gcv(best)*(1+1e-4) {
			t.Errorf("λ %g (GCV %g), brute-force best of grid %v is %g (GCV %g)", got, gcv(got), rec.Grid, best, gcv(best))
		}
		if len(rec.Grid) <= len(cfg.Lambdas) {
			t.Errorf("grid %v was not widened", rec.Grid)
		}
	}
}

// TestWidenedBest: on curves with a known limit beyond the grid, the
// choice is the λ furthest from the edge within PlateauGCV of the best
// score; on a curve that does not level off (GCV(λ) = λ), and on one with
// an interior minimum, it is the best score's λ.
func TestWidenedBest(t *testing.T) {
	for _, c := range []struct {
		name string
		gcv  func(l float64) float64
		want float64 // the λ chosen
	}{
		// 1 + λ: levels off at 1 as λ → 0; within 1e-3 of the best
		// (1 + 1e-6 at λ = 1e-6) up to λ ≈ 1e-3
		{"low plateau", func(l float64) float64 { return 1 + l }, 1e-3},
		// 1 + 1/λ levels off at 1 as λ → ∞: the smallest λ within 1e-3
		// of the best (at 1e8) is 1e3 (1 + 1e-3 ≤ (1 + 1e-8)(1 + 1e-3))
		{"high plateau", func(l float64) float64 { return 1 + 1/l }, 1e3},
		{"no plateau", func(l float64) float64 { return l }, 1e-6},
		{"interior", func(l float64) float64 { return (math.Log10(l) - 1) * (math.Log10(l) - 1) }, 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			score := func(_ context.Context, g []float64) ([]float64, error) {
				out := make([]float64, len(g))
				for i, l := range g {
					out[i] = c.gcv(l)
				}
				return out, nil
			}
			grid := []float64{1, 10, 100}
			sc, _ := score(context.Background(), grid)
			g, s, err := widenLambdas(context.Background(), grid, sc, score)
			if err != nil {
				t.Fatal(err)
			}
			got := g[widenedBest(g, s)]
			if math.Abs(got-c.want) > 1e-9*c.want {
				t.Errorf("chose %g from %v, want %g", got, g, c.want)
			}
		})
	}
}
