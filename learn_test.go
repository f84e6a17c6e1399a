package flycl

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/flycl/flycl/ridge"
)

// svdGCVScores is the explicit float64 definition of GCV on the codes h
// (n×m) with one-hot targets: thin SVD, Ŷ = U diag(s²/(s²+λ)) Uᵀ Y.
func svdGCVScores(h []float32, n, m int, labels []int, grid []float64) []float64 {
	classes := slices.Sorted(slices.Values(labels))
	classes = slices.Compact(classes)
	hd := mat.NewDense(n, m, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			hd.Set(i, j, float64(h[i*m+j]))
		}
	}
	y := mat.NewDense(n, len(classes), nil)
	for i, l := range labels {
		c, _ := slices.BinarySearch(classes, l)
		y.Set(i, c, 1)
	}
	var svd mat.SVD
	svd.Factorize(hd, mat.SVDThin)
	var u, uty mat.Dense
	svd.UTo(&u)
	s := svd.Values(nil)
	uty.Mul(u.T(), y)
	out := make([]float64, len(grid))
	for gi, lambda := range grid {
		var df float64
		f := mat.NewDense(len(s), len(classes), nil)
		for i, sv := range s {
			w := sv * sv / (sv*sv + lambda)
			df += w
			for c := range classes {
				f.Set(i, c, w*uty.At(i, c))
			}
		}
		var yhat, r mat.Dense
		yhat.Mul(&u, f)
		r.Sub(y, &yhat)
		rss := mat.Norm(&r, 2)
		den := 1 - df/float64(n)
		out[gi] = rss * rss / float64(n) / (den * den)
	}
	return out
}

// TestGCVScopeAllMatchesSVD: with GCVAll, the scores of every task are the
// GCV of ridge regression on all samples so far (n < m, n = m, n > m
// along the way), checked against an explicit float64 SVD of the
// concatenated codes: same choice, and scores within the tolerance derived
// in ridge.TestGCVFromStatisticsMatchesSVD (here a loose 1e-2 relative for
// finite scores: the codes' float32 G at κ = ‖G‖/λ ≤ 1e5).
func TestGCVScopeAllMatchesSVD(t *testing.T) {
	ctx := context.Background()
	const d = 24
	cfg := Config{M: 300, P: 8, K: 90, Seed: 5, Lambdas: []float64{1, 10, 100, 1e3, 1e4, 1e5}, GCVScope: GCVAll}
	model, err := New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	var allX []float32
	var allY []int
	for ti, n := range []int{150, 150, 150} {
		x, y := clusters(uint64(ti+40), n, d, []int{2 * ti, 2*ti + 1}, 1.5)
		rec, err := model.Learn(ctx, x, y, nil)
		if err != nil {
			t.Fatal(err)
		}
		allX, allY = append(allX, x...), append(allY, y...)
		h, err := model.expandCodes(ctx, allX)
		if err != nil {
			t.Fatal(err)
		}
		want := svdGCVScores(h, len(allY), cfg.M, allY, cfg.Lambdas)
		if rec.GCVScope != GCVAll {
			t.Fatalf("task %d recorded scope %v", ti, rec.GCVScope)
		}
		if b, w := ridge.BestLambda(rec.GCV), ridge.BestLambda(want); b != w {
			t.Errorf("task %d (n=%d): GCV all chose λ=%g, SVD on all codes %g\n got %v\nwant %v", ti, len(allY), cfg.Lambdas[b], cfg.Lambdas[w], rec.GCV, want)
		}
		for i, v := range rec.GCV {
			if !math.IsInf(v, 1) && math.Abs(v-want[i]) > 1e-2*want[i] {
				t.Errorf("task %d λ=%g: %g, SVD %g", ti, cfg.Lambdas[i], v, want[i])
			}
		}
	}
}

// TestLearnStatsExactAcrossShards: learning each task from the merged
// statistics of 1, 2 or 7 shards, merged in shuffled orders, gives the
// same λ for every task and the same predictions on a test set, and G
// within one float32 rounding (merged G's are float64 sums that differ by
// a few 2⁻⁵³, then rounded once to the model's float32). Learning the same
// tasks from their features (LearnTask) gives the same λ's.
func TestLearnStatsExactAcrossShards(t *testing.T) {
	ctx := context.Background()
	const d = 24
	tasks := [][]int{{0, 1, 2}, {3, 4}, {5, 6, 0}}
	var xs [][]float32
	var ys [][]int
	for ti, cls := range tasks {
		x, y := clusters(uint64(ti+60), 230, d, cls, 1.2)
		xs, ys = append(xs, x), append(ys, y)
	}
	tx, ty := clusters(99, 400, d, []int{0, 1, 2, 3, 4, 5, 6}, 1.2)
	for _, v := range []struct {
		scope GCVScope
		scale LambdaScale
	}{{GCVTask, LambdaAbsolute}, {GCVAll, LambdaAbsolute}, {GCVAll, LambdaRelative}} {
		scope := v.scope
		cfg := Config{M: 300, P: 8, K: 90, Seed: 3, Lambdas: []float64{1e-1, 1, 10, 100, 1e3, 1e4}, GCVScope: scope, LambdaScale: v.scale}
		if v.scale == LambdaRelative {
			cfg.Lambdas = DefaultRelativeLambdas
		}
		direct, _ := New(cfg, d)
		var directL []float64
		for ti := range tasks {
			rec, err := direct.Learn(ctx, xs[ti], ys[ti], nil)
			if err != nil {
				t.Fatal(err)
			}
			directL = append(directL, rec.Lambda)
		}
		var refPred []int
		var refL []float64
		var refModel *Model
		r := rand.New(rand.NewPCG(1, 2))
		for _, shards := range []int{1, 2, 7} {
			for trial := 0; trial < 2; trial++ {
				name := fmt.Sprintf("%v/%v/shards%d/%d", scope, v.scale, shards, trial)
				model, _ := New(cfg, d)
				var lambdas []float64
				for ti := range tasks {
					n := len(ys[ti])
					parts := make([]*ridge.Stats, shards)
					for i := range parts {
						lo, hi := i*n/shards, (i+1)*n/shards
						var err error
						if parts[i], err = model.TaskStats(ctx, xs[ti][lo*d:hi*d], ys[ti][lo:hi]); err != nil {
							t.Fatal(err)
						}
					}
					merged, _ := ridge.NewStats(cfg.M)
					for _, i := range r.Perm(shards) {
						if err := merged.Merge(parts[i]); err != nil {
							t.Fatal(err)
						}
					}
					rec, err := model.Learn(ctx, nil, nil, &LearnOptions{Stats: merged})
					if err != nil {
						t.Fatal(err)
					}
					lambdas = append(lambdas, rec.Lambda)
				}
				pred, err := model.Predictor().Predict(ctx, tx)
				if err != nil {
					t.Fatal(err)
				}
				if refModel == nil {
					refModel, refPred, refL = model, pred, lambdas
					// The direct model multiplies its inputs by a power of two
					// s (LambdaRelative), which multiplies G and the relative
					// grid by s²; the statistics were computed unscaled.
					s2 := direct.inputScale() * direct.inputScale() / (model.inputScale() * model.inputScale())
					for i := range lambdas {
						// relative grids are scaled by traces summed in
						// different orders: equal to rounding
						if math.Abs(lambdas[i]*s2-directL[i]) > 1e-6*directL[i] {
							t.Errorf("%s: λ's from statistics %v, from features %v", name, lambdas, directL)
						}
					}
					acc := 0
					for i := range pred {
						if pred[i] == ty[i] {
							acc++
						}
					}
					if acc < len(ty)*8/10 {
						t.Errorf("%s: test accuracy %d/%d", name, acc, len(ty))
					}
					continue
				}
				if !slices.Equal(lambdas, refL) {
					t.Errorf("%s: λ's %v, one shard %v", name, lambdas, refL)
				}
				if !slices.Equal(pred, refPred) {
					t.Errorf("%s: predictions differ from one shard's", name)
				}
				if c, rc := model.Classes().Counts(), refModel.Classes().Counts(); !slices.Equal(c, rc) {
					t.Errorf("%s: class counts %v, one shard %v", name, c, rc)
				}
				a, b := model.Snapshot(), refModel.Snapshot()
				for i := 0; i < cfg.M; i++ {
					ra, rb := a.lowerRow(i), b.lowerRow(i)
					for j := 0; j <= i; j++ {
						if x, y := ra[j], rb[j]; x != y && math.Abs(float64(x-y)) > math.Abs(float64(y))*0x1p-23 {
							t.Fatalf("%s: G[%d][%d] = %g, one shard %g", name, i, j, x, y)
						}
					}
				}
			}
		}
	}
}

// TestLearnOptionsRefused: a λ that is negative or not finite, and a
// learn given both features and statistics, are refused with the model
// unchanged (nothing learned, version 0); nil options and the zero
// options learn alike (GCV on the task: the same λ and classifier bits).
func TestLearnOptionsRefused(t *testing.T) {
	ctx := context.Background()
	const d = 16
	x, y := clusters(4, 40, d, []int{0, 1}, 0.5)
	m, _ := New(small, d)
	st, err := m.TaskStats(ctx, x, y)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		x   []float32
		y   []int
		opt *LearnOptions
	}{
		"negative λ":            {x, y, &LearnOptions{Lambda: -1}},
		"NaN λ":                 {x, y, &LearnOptions{Lambda: math.NaN()}},
		"infinite λ":            {x, y, &LearnOptions{Lambda: math.Inf(1)}},
		"features and stats":    {x, y, &LearnOptions{Stats: st}},
		"labels and stats":      {nil, y, &LearnOptions{Stats: st}},
		"infinite λ with stats": {nil, nil, &LearnOptions{Stats: st, Lambda: math.Inf(1)}},
	} {
		if _, err := m.Learn(ctx, tc.x, tc.y, tc.opt); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if m.Version() != 0 || m.Samples() != 0 || m.Classes().Len() != 0 {
			t.Fatalf("%s: the model changed (version %d, %d samples)", name, m.Version(), m.Samples())
		}
	}
	a, b := m.Clone(), m.Clone()
	ra, err := a.Learn(ctx, x, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := b.Learn(ctx, x, y, &LearnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ra.Lambda != rb.Lambda || ra.GCV == nil || !slices.Equal(a.Snapshot().Coef(), b.Snapshot().Coef()) {
		t.Errorf("nil options: λ %g, zero options: λ %g (GCV run: %v); classifiers equal: %v", ra.Lambda, rb.Lambda, ra.GCV != nil, slices.Equal(a.Snapshot().Coef(), b.Snapshot().Coef()))
	}
}
