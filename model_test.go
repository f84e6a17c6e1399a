package flycl

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/flycl/flycl/linalg"
	"github.com/flycl/flycl/ridge"
	"gonum.org/v1/gonum/mat"
)

// clusters draws n samples of d-dimensional features for the given labels:
// a fixed per-label mean (seeded by the label) plus Gaussian noise.
func clusters(seed uint64, n, d int, labels []int, noise float64) ([]float32, []int) {
	r := rand.New(rand.NewPCG(seed, 1))
	x := make([]float32, n*d)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		l := labels[i%len(labels)]
		y[i] = l
		mr := rand.New(rand.NewPCG(uint64(l+1000), 7))
		for j := 0; j < d; j++ {
			x[i*d+j] = float32(mr.NormFloat64() + noise*r.NormFloat64())
		}
	}
	return x, y
}

var small = Config{M: 600, P: 8, K: 180, Seed: 3, Lambdas: []float64{1e-1, 1, 10, 100, 1e3, 1e4}}

func TestLearnsWithoutForgetting(t *testing.T) {
	ctx := context.Background()
	const d = 24
	model, err := New(small, d)
	if err != nil {
		t.Fatal(err)
	}
	tasks := [][]int{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}}
	var testX [][]float32
	var testY [][]int
	for ti, cls := range tasks {
		x, y := clusters(uint64(ti), 200, d, cls, 0.8)
		if _, err := model.Learn(ctx, x, y, nil); err != nil {
			t.Fatal(err)
		}
		tx, ty := clusters(uint64(100+ti), 100, d, cls, 0.8)
		testX, testY = append(testX, tx), append(testY, ty)
		for i := 0; i <= ti; i++ {
			acc, err := model.Predictor().Accuracy(ctx, testX[i], testY[i])
			if err != nil {
				t.Fatal(err)
			}
			if acc < 0.95 {
				t.Errorf("after task %d, accuracy on task %d is %.3f", ti, i, acc)
			}
		}
	}
	if got := model.Classes().Labels(); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Errorf("classes %v", got)
	}
	if len(model.History()) != 5 || model.Samples() != 1000 {
		t.Errorf("history %d samples %d", len(model.History()), model.Samples())
	}
}

// TestMatchesBruteForce recomputes everything in float64 from the
// definitions: codes by dense W and a full sort, λ by GCV from an explicit
// SVD of the task's codes, and C by a dense solve of the cumulative
// normal equations. Scores must agree to 1e-3 of their scale (float32
// Gram and Cholesky with condition up to ~1e4).
func TestMatchesBruteForce(t *testing.T) {
	ctx := context.Background()
	const d = 16
	cfg := small
	cfg.Lambdas = []float64{1, 10, 100, 1000}
	model, err := New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	w := model.w.Dense()
	m, k := cfg.M, cfg.K
	codes := func(x []float32) *mat.Dense {
		n := len(x) / d
		h := mat.NewDense(n, m, nil)
		for i := 0; i < n; i++ {
			row := make([]float64, m)
			for j := 0; j < m; j++ {
				for l := 0; l < d; l++ {
					row[j] += float64(w[j*d+l]) * float64(x[i*d+l])
				}
			}
			sorted := slices.Clone(row)
			sort.Sort(sort.Reverse(sort.Float64Slice(sorted)))
			for j, v := range row {
				if v >= sorted[k-1] {
					h.Set(i, j, v)
				}
			}
		}
		return h
	}
	var gAll, sAll *mat.Dense
	var labels []int
	for ti, cls := range [][]int{{40, 7, 3}, {-2, 11}} {
		x, y := clusters(uint64(ti+50), 90, d, cls, 1.0)
		rec, err := model.Learn(ctx, x, y, nil)
		if err != nil {
			t.Fatal(err)
		}
		h := codes(x)
		// GCV by SVD on this task only
		var svd mat.SVD
		svd.Factorize(h, mat.SVDThin)
		var u mat.Dense
		svd.UTo(&u)
		s := svd.Values(nil)
		taskCls := slices.Sorted(slices.Values(cls))
		y1 := mat.NewDense(len(y), len(taskCls), nil)
		for i, l := range y {
			y1.Set(i, slices.Index(taskCls, l), 1)
		}
		best, bestScore := 0, math.Inf(1)
		for li, lambda := range cfg.Lambdas {
			var uty, yhat, r mat.Dense
			uty.Mul(u.T(), y1)
			df := 0.0
			for i := range s {
				f := s[i] * s[i] / (s[i]*s[i] + lambda)
				df += f
				for c := 0; c < uty.RawMatrix().Cols; c++ {
					uty.Set(i, c, uty.At(i, c)*f)
				}
			}
			yhat.Mul(&u, &uty)
			r.Sub(y1, &yhat)
			nrm := mat.Norm(&r, 2)
			den := 1 - df/float64(len(y))
			score := nrm * nrm / float64(len(y)) / (den * den)
			if math.Abs(score-rec.GCV[li]) > 1e-3*score {
				t.Errorf("task %d lambda %g: GCV %g want %g", ti, lambda, rec.GCV[li], score)
			}
			if score < bestScore {
				best, bestScore = li, score
			}
		}
		if rec.Lambda != cfg.Lambdas[best] {
			t.Errorf("task %d: lambda %g want %g", ti, rec.Lambda, cfg.Lambdas[best])
		}
		// cumulative statistics over the model's class order
		labels = model.Classes().Labels()
		var g mat.Dense
		g.Mul(h.T(), h)
		yAll := mat.NewDense(len(y), len(labels), nil)
		for i, l := range y {
			yAll.Set(i, slices.Index(labels, l), 1)
		}
		var sm mat.Dense
		sm.Mul(h.T(), yAll)
		if gAll == nil {
			gAll, sAll = &g, &sm
		} else {
			gAll.Add(gAll, &g)
			grown := mat.NewDense(m, len(labels), nil)
			grown.Slice(0, m, 0, sAll.RawMatrix().Cols).(*mat.Dense).Copy(sAll)
			grown.Add(grown, &sm)
			sAll = grown
		}
		a := mat.DenseCopyOf(gAll)
		for i := 0; i < m; i++ {
			a.Set(i, i, a.At(i, i)+rec.Lambda)
		}
		var c mat.Dense
		if err := c.Solve(a, sAll); err != nil {
			t.Fatal(err)
		}
		tx, _ := clusters(uint64(ti+70), 30, d, cls, 1.0)
		var want mat.Dense
		want.Mul(codes(tx), &c)
		got, err := model.Predictor().Scores(ctx, tx)
		if err != nil {
			t.Fatal(err)
		}
		scale := mat.Norm(&want, math.Inf(1))
		nc := len(labels)
		for i := 0; i < 30; i++ {
			for j := 0; j < nc; j++ {
				if diff := math.Abs(float64(got[i*nc+j]) - want.At(i, j)); diff > 1e-3*scale {
					t.Fatalf("task %d: score[%d,%d]=%g want %g", ti, i, j, got[i*nc+j], want.At(i, j))
				}
			}
		}
	}
	if !slices.Equal(labels, []int{3, 7, 40, -2, 11}) {
		t.Errorf("class order %v: want each task's new labels ascending, tasks in order", labels)
	}
}

// TestOnlineEqualsBatch: mini-batches with a fixed λ give the classifier
// that one task with that λ gives (to float32 rounding of the sums).
func TestOnlineEqualsBatch(t *testing.T) {
	ctx := context.Background()
	const d, lambda = 20, 50.0
	batch, _ := New(small, d)
	online, _ := New(small, d)
	for ti, cls := range [][]int{{1, 2, 3}, {4, 5}} {
		x, y := clusters(uint64(ti+9), 95, d, cls, 1.0)
		if _, err := batch.Learn(ctx, x, y, &LearnOptions{Lambda: lambda}); err != nil {
			t.Fatal(err)
		}
		for lo := 0; lo < len(y); lo += 10 {
			hi := min(len(y), lo+10)
			if _, err := online.Learn(ctx, x[lo*d:hi*d], y[lo:hi], &LearnOptions{Lambda: lambda}); err != nil {
				t.Fatal(err)
			}
		}
	}
	tx, _ := clusters(99, 40, d, []int{1, 2, 3, 4, 5}, 1.0)
	a, _ := batch.Predictor().Scores(ctx, tx)
	b, _ := online.Predictor().Scores(ctx, tx)
	var scale float64
	for _, v := range a {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-4*scale {
			t.Fatalf("score %d: batch %g online %g", i, a[i], b[i])
		}
	}
	if !slices.Equal(batch.Classes().Labels(), online.Classes().Labels()) {
		t.Errorf("classes %v vs %v", batch.Classes().Labels(), online.Classes().Labels())
	}
	// GCV per mini-batch also works and picks a grid value.
	rec, err := online.Learn(ctx, tx[:10*d], []int{1, 2, 3, 4, 5, 1, 2, 3, 4, 5}, nil)
	if err != nil || !slices.Contains(small.Lambdas, rec.Lambda) || len(rec.GCV) != len(small.Lambdas) {
		t.Errorf("online GCV: %v %+v", err, rec)
	}
}

func TestPredictRestrictedToSeenClasses(t *testing.T) {
	ctx := context.Background()
	model, _ := New(small, 8)
	if _, err := model.Predictor().Predict(ctx, make([]float32, 8)); err == nil {
		t.Error("predict before learning: no error")
	}
	x, y := clusters(1, 60, 8, []int{100, 200}, 0.5)
	if _, err := model.Learn(ctx, x, y, nil); err != nil {
		t.Fatal(err)
	}
	other, _ := clusters(2, 30, 8, []int{300, 400}, 0.5)
	pred, err := model.Predictor().Predict(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pred {
		if p != 100 && p != 200 {
			t.Fatalf("predicted unseen class %d", p)
		}
	}
}

func TestBadInputs(t *testing.T) {
	ctx := context.Background()
	const d = 6
	cfg := small
	cfg.P = 3
	model, err := New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	good, labels := clusters(1, 20, d, []int{1, 2}, 0.5)
	nan := slices.Clone(good)
	nan[17] = float32(math.NaN())
	inf := slices.Clone(good)
	inf[3] = float32(math.Inf(-1))
	for name, f := range map[string]func() error{
		"NaN":       func() error { _, err := model.Learn(ctx, nan, labels, nil); return err },
		"Inf":       func() error { _, err := model.Learn(ctx, inf, labels, nil); return err },
		"dimension": func() error { _, err := model.Learn(ctx, good[:len(good)-1], labels, nil); return err },
		"empty":     func() error { _, err := model.Learn(ctx, nil, nil, nil); return err },
		"labels":    func() error { _, err := model.Learn(ctx, good, labels[1:], nil); return err },
		"lambda":    func() error { _, err := model.Learn(ctx, good, labels, &LearnOptions{Lambda: -1}); return err },
		"online":    func() error { _, err := model.Learn(ctx, good, labels, &LearnOptions{Lambda: math.NaN()}); return err },
		"cancelled": func() error {
			c, cancel := context.WithCancel(ctx)
			cancel()
			_, err := model.Learn(c, good, labels, nil)
			return err
		},
		"no classes": func() error { _, err := model.Predictor().Scores(ctx, good); return err },
	} {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if model.Classes().Len() != 0 || model.Samples() != 0 || len(model.History()) != 0 {
		t.Fatalf("failed calls changed the model: classes %v samples %d", model.Classes().Labels(), model.Samples())
	}
	if _, err := model.Learn(ctx, good, labels, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := model.Predictor().Accuracy(ctx, good[:d], []int{3}); err == nil {
		t.Error("unknown test label: no error")
	}
	for _, cfg := range []Config{{M: 10, K: 11}, {P: 7}, {Lambdas: []float64{0}}, {M: -1}} {
		if _, err := New(cfg, d); err == nil {
			t.Errorf("config %+v: no error", cfg)
		}
	}
}

// TestLambdaRaisedWhenNotPositiveDefinite: with fewer samples than m, G is
// singular, and G + λI with a λ far below float32 resolution of G cannot
// be factored. The solve must raise λ (recording the original) instead of
// failing, and the classifier must still work.
func TestLambdaRaisedWhenNotPositiveDefinite(t *testing.T) {
	ctx := context.Background()
	const d = 16
	cfg := small
	cfg.Lambdas = []float64{1e-9, 1e3, 1e5}
	model, _ := New(cfg, d)
	x, y := clusters(1, 60, d, []int{1, 2, 3}, 0.5)
	for i := range x {
		x[i] *= 100
	}
	rec, err := model.Learn(ctx, x, y, &LearnOptions{Lambda: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	if rec.RaisedFrom != 1e-9 || !(rec.Lambda > 1e-9) || model.Lambda() != rec.Lambda {
		t.Fatalf("lambda %g raised from %g", rec.Lambda, rec.RaisedFrom)
	}
	if acc, err := model.Predictor().Accuracy(ctx, x, y); err != nil || acc < 0.95 {
		t.Errorf("accuracy %.3f %v", acc, err)
	}
}

// TestSharedTaskGram checks that a task learned with the band GCV and
// n >= m, whose statistics update adds the Gram matrix the GCV formed
// instead of computing it (one pass over the codes), ends with the same
// G and classifier as the same task learned with that λ fixed (which
// computes G by its own ssyrk): G within the float32 rounding of sums of
// n products (4·√n·u32 of the largest diagonal entry), scores within the
// same relative rounding times the conditioning of G + λI.
func TestSharedTaskGram(t *testing.T) {
	if !linalg.HaveBandReduction {
		t.Skip("pure-Go backend: no band reduction")
	}
	ctx := context.Background()
	const d, n = 16, 240
	cfg := Config{M: 150, P: 8, K: 60, Seed: 3, Lambdas: []float64{1, 10, 100, 1e3}, GCV: ridge.GCVBand}
	x, y := clusters(9, n, d, []int{4, 1, 8}, 1.0)
	shared, err := New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := shared.Learn(ctx, x, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := shared.gcv.TaskGram(shared.hbuf[:n*cfg.M], n, cfg.M); !ok {
		t.Fatal("the band GCV did not leave the task's Gram for the update")
	}
	plain, _ := New(cfg, d)
	if _, err := plain.Learn(ctx, x, y, &LearnOptions{Lambda: rec.Lambda}); err != nil {
		t.Fatal(err)
	}
	var maxG float64
	for i := 0; i < cfg.M; i++ {
		maxG = max(maxG, float64(plain.acc.G(i, i)))
	}
	tol := 4 * math.Sqrt(n) * 0x1p-24 * maxG
	for i := 0; i < cfg.M; i++ {
		for j := 0; j <= i; j++ {
			if dg := math.Abs(float64(shared.acc.G(i, j) - plain.acc.G(i, j))); dg > tol {
				t.Fatalf("G[%d][%d]: shared %g, own ssyrk %g (|d| %.2g > %.2g)", i, j, shared.acc.G(i, j), plain.acc.G(i, j), dg, tol)
			}
		}
	}
	s1, _ := shared.Predictor().Scores(ctx, x)
	s2, _ := plain.Predictor().Scores(ctx, x)
	kappa := (float64(cfg.M)*maxG + rec.Lambda) / rec.Lambda // ‖G‖ ≤ m·max G_ii
	var num, den float64
	for i := range s1 {
		num += float64(s1[i]-s2[i]) * float64(s1[i]-s2[i])
		den += float64(s2[i]) * float64(s2[i])
	}
	if rel := math.Sqrt(num / den); rel > 4*math.Sqrt(n)*0x1p-24*kappa {
		t.Fatalf("scores differ by %.2g relative (tol %.2g)", rel, 4*math.Sqrt(n)*0x1p-24*kappa)
	}
}
