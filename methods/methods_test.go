package methods

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/baselines"
	"github.com/flycl/flycl/experiment"
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
