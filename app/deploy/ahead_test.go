package deploy

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/leakcheck"
)

// photos15 are 15 feature vectors of d dimensions in 3 classes of 5, as a
// new model's first photos give: the class mean shifted on a few
// dimensions of each class, so the classes are told apart.
func photos15(d int) ([]float32, []string) {
	x := blob(21, 15, d)
	names := make([]string, 15)
	for i := range names {
		c := i / 5
		names[i] = []string{"cat", "dog", "bird"}[c]
		for j := c * 10; j < c*10+10; j++ {
			x[i*d+j] += 3
		}
	}
	return x, names
}

// learned is m after learning the 15 photos, with the scores it gives
// 10 other inputs and its W's digest.
func learned(t *testing.T, m *Model, d int) ([]float32, string) {
	t.Helper()
	x, names := photos15(d)
	if _, err := m.Learn(context.Background(), x, names, nil, LearnOptions{}); err != nil {
		t.Fatal(err)
	}
	s, err := m.Model.Predictor().Scores(context.Background(), blob(5, 10, d))
	if err != nil {
		t.Fatal(err)
	}
	return s, m.Model.Snapshot().Projection().Digest()
}

// TestAheadSameModel: a model created with the W generated ahead is the
// model created without (New, whose W flycl.New generates after), bit for
// bit: the same W, configuration and λ, and the same scores after the
// same first learn; at the image defaults of MobileNetV2's d = 1280.
// So too when the W started is for another seed (it is not used) or its
// generation was stopped (W is generated then).
func TestAheadSameModel(t *testing.T) {
	ctx := context.Background()
	const d = 1280
	cfg := DefaultImageConfig(d)
	want, err := New(cfg, d, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantScores, wantW := learned(t, want, d)

	stopped, cancel := context.WithCancel(ctx)
	cancel()
	other := cfg
	other.Seed++
	for name, a := range map[string]*Ahead{
		"ahead":         StartNew(ctx, cfg, d),
		"another seed":  StartNew(ctx, other, d),
		"stopped ahead": StartNew(stopped, cfg, d),
		"nil":           nil,
	} {
		got, err := a.New(ctx, cfg, d, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		scores, w := learned(t, got, d)
		if w != wantW {
			t.Errorf("%s: W's digest %s, want %s", name, w, wantW)
		}
		if got.Model.Lambda() != want.Model.Lambda() || got.Model.Config().Seed != want.Model.Config().Seed ||
			got.Model.Config().M != want.Model.Config().M || got.Model.Config().P != want.Model.Config().P {
			t.Errorf("%s: λ %g, config %+v; want λ %g, %+v", name, got.Model.Lambda(), got.Model.Config(), want.Model.Lambda(), want.Model.Config())
		}
		if !sameBits(scores, wantScores) {
			t.Errorf("%s: the scores differ from those of the model whose W was generated after", name)
		}
	}
	// W with flycl.NewWithProjection is flycl.New's model
	w, err := StartNew(ctx, cfg, d).W(ctx, cfg, d)
	if err != nil || w == nil {
		t.Fatalf("W = %v, %v", w, err)
	}
	if core, err := flycl.NewWithProjection(cfg, w); err != nil || core.Snapshot().Projection().Digest() != wantW || core.Config().P != want.Model.Config().P {
		t.Errorf("flycl.NewWithProjection of W: %v, want W's digest %s", err, wantW)
	}
}

// TestAheadCancelled: a wait for W cut short by its context is an error
// wrapping the context's, and the generation stops with it (no goroutine
// is left); a W not taken stops on Stop. The W (m = 100 000, p = 300:
// some 3 s of CPU) is still being made when they happen. A configuration
// New refuses starts nothing, and New reports it.
func TestAheadCancelled(t *testing.T) {
	const d = 512
	cfg := flycl.Config{M: 100000, P: 300, K: 100}
	base := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if m, err := StartNew(context.Background(), cfg, d).New(ctx, cfg, d, nil); m != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("New with its context cancelled = %v, %v; want context.Canceled", m, err)
	}
	leakcheck.Settled(t, base)
	StartNew(context.Background(), cfg, d).Stop()
	leakcheck.Settled(t, base)

	bad := flycl.Config{M: 100, P: 600, K: 10}
	if a := StartNew(context.Background(), bad, d); a != nil {
		t.Errorf("StartNew of p > d = %v, want nil", a)
	}
	if _, err := (*Ahead)(nil).New(context.Background(), bad, d, nil); err == nil {
		t.Error("New of p > d: no error")
	}
}
