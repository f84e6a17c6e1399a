package methods

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl/internal/codec"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/lab/baselines"
	"github.com/flycl/flycl/lab/experiment"
	"github.com/flycl/flycl/projection"
)

func TestParse(t *testing.T) {
	o := Options{FlyCL: flycl.Config{M: 100, P: 3, K: 30}}
	ms, err := Parse("flycl, NCM,baselines", o)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	want := "Fly-CL,NCM,RanPAC (no FT),F-OAL,RanDumb,Joint ridge (upper bound)"
	if got := strings.Join(names, ","); got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	all, err := Parse("all", o)
	if err != nil || len(all) != len(Groups["all"]) {
		t.Errorf("all: %d %v", len(all), err)
	}
	for _, m := range all {
		l, err := m.New(8, 1)
		if err != nil || l == nil {
			t.Errorf("%s: %v", m.Name, err)
		}
	}
	if _, err := Parse("flycl,nope", o); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown: %v", err)
	}
	if _, err := Parse(" , ", o); err == nil {
		t.Error("empty: no error")
	}
}

// TestImportedWEverywhere: a given W (--w) is the W of every method built
// on Fly-CL, not only of "flycl": each one's predictions equal those of a
// reference built directly on that W, and differ from the seeded W's.
func TestImportedWEverywhere(t *testing.T) {
	const n, d, classes = 120, 12, 4
	r := rand.New(rand.NewPCG(3, 4))
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	labels := make([]int, n)
	for i := range labels {
		labels[i] = i % classes // no signal: predictions follow W closely
	}
	xt := make([]float32, n*d)
	for i := range xt {
		xt[i] = float32(r.NormFloat64())
	}
	cfg := flycl.Config{M: 200, P: 4, K: 50, Lambdas: []float64{0.1, 1, 10}}
	w, err := projection.Generate(cfg.M, d, cfg.P, 77) // not cfg.Seed
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	predict := func(l experiment.Learner) []int {
		t.Helper()
		if err := l.LearnTask(ctx, x, labels); err != nil {
			t.Fatal(err)
		}
		p, err := l.Predict(ctx, xt)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	reference := func(w *projection.Matrix, wrap func(*flycl.Model) experiment.Learner) []int {
		var m *flycl.Model
		var err error
		if w != nil {
			m, err = flycl.NewWithProjection(cfg, w)
		} else {
			m, err = flycl.New(cfg, d)
		}
		if err != nil {
			t.Fatal(err)
		}
		return predict(wrap(m))
	}
	plain := func(m *flycl.Model) experiment.Learner { return &FlyCL{Model: m} }
	for _, tc := range []struct {
		method string
		wrap   func(*flycl.Model) experiment.Learner
	}{
		{"flycl", plain}, {"flycl-online", plain}, {"joint", plain},
		{"flycl-noridge", func(m *flycl.Model) experiment.Learner { return baselines.NewCodeNCMFrom(m) }},
		{"flycl-hebbian", func(m *flycl.Model) experiment.Learner {
			h, err := baselines.NewHebbianFrom(m, 100)
			if err != nil {
				t.Fatal(err)
			}
			return h
		}},
	} {
		ms, err := Parse(tc.method, Options{FlyCL: cfg, W: w, OnlineBatch: n})
		if err != nil {
			t.Fatal(err)
		}
		l, err := ms[0].New(d, 1)
		if err != nil {
			t.Fatal(err)
		}
		got, want, seeded := predict(l), reference(w, tc.wrap), reference(nil, tc.wrap)
		if !slices.Equal(got, want) {
			t.Errorf("%s: predictions differ from Fly-CL on the given W", tc.method)
		}
		if slices.Equal(want, seeded) {
			t.Fatalf("%s: the given and the seeded W predict alike; the test cannot tell them apart", tc.method)
		}
	}
}

func TestOnlineBatchErrors(t *testing.T) {
	if _, err := Parse("flycl-online", Options{OnlineBatch: -1}); err == nil || !strings.Contains(err.Error(), "-1") {
		t.Errorf("batch -1: %v", err)
	}
	o := &Online{Batch: -1}
	if err := o.LearnTask(context.Background(), nil, nil); err == nil {
		t.Error("LearnTask with batch -1: no error")
	}
}

// TestOnlineShufflesTask: flycl-online streams a class-grouped task in
// seeded shuffled mini-batches (every mini-batch holds both classes, and
// the same seed gives the same model), and with a fixed λ its classifier is
// batch Fly-CL's up to the float32 rounding of the reordered sums.
func TestOnlineShufflesTask(t *testing.T) {
	const d, per, batch, lambda = 8, 100, 20, 1e3
	r := rand.New(rand.NewPCG(3, 4))
	n := 2 * per
	x, labels := make([]float32, n*d), make([]int, n)
	for i := range n { // grouped by class, as the runner hands tasks over
		labels[i] = i / per
		for j := range d {
			c := float64(1 - 2*labels[i]) // class 0 near +1, class 1 near -1
			x[i*d+j] = float32(c + 0.3*r.NormFloat64())
		}
	}
	cfg := flycl.Config{M: 64, P: 4, K: 16, Lambdas: []float64{1, 10, 100, 1e3, 1e4}}
	ctx := context.Background()
	online := func(l float64, seed int64) *Online {
		t.Helper()
		m, err := flycl.New(cfg, d)
		if err != nil {
			t.Fatal(err)
		}
		o := &Online{FlyCL: FlyCL{Model: m}, Batch: batch, Lambda: l, Seed: seed}
		if err := o.LearnTask(ctx, x, labels); err != nil {
			t.Fatal(err)
		}
		return o
	}
	// GCV on every mini-batch: each saw both classes.
	o := online(0, 1993)
	hist := o.Model.History()
	if len(hist) != n/batch {
		t.Fatalf("%d updates, want %d", len(hist), n/batch)
	}
	for i, h := range hist {
		if len(h.Classes) != 2 {
			t.Errorf("mini-batch %d holds classes %v: the task was not shuffled", i, h.Classes)
		}
	}
	again := online(0, 1993)
	s1, _ := o.Model.Predictor().Scores(ctx, x)
	s2, _ := again.Model.Predictor().Scores(ctx, x)
	if !slices.Equal(s1, s2) {
		t.Error("same seed, different models")
	}

	// Fixed λ: the same statistics as batch Fly-CL, summed in another order.
	fixed := online(lambda, 1993)
	b, err := flycl.New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Learn(ctx, x, labels, &flycl.LearnOptions{Lambda: lambda}); err != nil {
		t.Fatal(err)
	}
	got, _ := fixed.Model.Predictor().Scores(ctx, x)
	want, _ := b.Predictor().Scores(ctx, x)
	// Reordering changes G and S by float32 rounding, at most n·2⁻²⁴ of
	// their size; (G+λI)⁻¹ amplifies that by κ ≤ (tr G + λ)/λ, tr G = Σ‖h‖².
	h, err := codec.Expand(ctx, b, x)
	if err != nil {
		t.Fatal(err)
	}
	var tr, top float64
	for _, v := range h {
		tr += float64(v) * float64(v)
	}
	for _, v := range want {
		top = max(top, math.Abs(float64(v)))
	}
	tol := 10 * (tr + lambda) / lambda * float64(n) * 0x1p-24 * top
	for i := range want {
		if diff := math.Abs(float64(got[i] - want[i])); !(diff <= tol) {
			t.Fatalf("score %d: online %g, batch %g (|diff| %g > %g)", i, got[i], want[i], diff, tol)
		}
	}
	p1, _ := fixed.Model.Predictor().Predict(ctx, x)
	p2, _ := b.Predictor().Predict(ctx, x)
	if !slices.Equal(p1, p2) {
		t.Error("fixed λ: online and batch predict differently")
	}
}
