package main

import (
	"context"
	"slices"
	"testing"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/internal/statcmp"
)

// An online learn whose second mini-batch is refused (its features would
// take G past flycl.GramLimit) after the first was learned returns
// FLYCL_E_TOO_LARGE and leaves the model as before, as flycl.h promises:
// the first mini-batch is taken back out, so the classes, λ and the
// calibration are those before, and G and S equal them up to float32
// rounding (statcmp.Close: each of the 4 + 2 rows the statistics ever
// held added once, the 2 subtracted once). flycl_unlearn then takes back
// the learn before it, as if the failed learn had never been asked.
func TestOnlineLearnRefusedTakenBack(t *testing.T) {
	const d = 4
	r := newRegistry()
	id, err := r.newModel(`{"m":32,"p":2,"k":8}`, d)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := r.model(id)
	first := []float32{1, 2, 3, 4, 4, 3, 2, 1, 0, 1, 0, 1, 1, 0, 1, 0}
	if _, err := m.learn(slices.Clone(first), 4, d, []int32{0, 1, 0, 1}, []string{"a", "b"}, 0, 0); err != nil {
		t.Fatal(err)
	}
	var before *deploy.Model
	m.read(func(dm *deploy.Model, _ *predictor) error {
		before = &deploy.Model{Model: dm.Model.Clone()}
		return nil
	})

	// batch 1: a and a new class c, as usual; batch 2: c again, too large
	const huge = 3e19 // codes of about 1e19: their squares pass GramLimit
	x := []float32{1, 1, 1, 1, 2, 0, 2, 0, huge, huge, huge, huge, 1, 2, 1, 2}
	_, err = m.learn(slices.Clone(x), 4, d, []int32{0, 1, 1, 1}, []string{"a", "c"}, 0, 2)
	if s := statusOf(err); s != FLYCL_E_TOO_LARGE {
		t.Fatalf("learn: %v (status %d), want FLYCL_E_TOO_LARGE", err, s)
	}

	// the truth for the tolerance: every row the statistics ever held
	all := &deploy.Model{Model: before.Model.Clone()}
	if _, err := all.Learn(context.Background(), x[:2*d], []string{"a", "c"}, nil, deploy.LearnOptions{}); err != nil {
		t.Fatal(err)
	}
	m.read(func(dm *deploy.Model, _ *predictor) error {
		if err := statcmp.Close(dm.Model, before.Model, all.Model, 2*6*0x1p-24); err != nil {
			t.Errorf("after the refused learn, against the model before it: %v", err)
		}
		if a, b := dm.Model.Lambda(), before.Model.Lambda(); a != b {
			t.Errorf("λ %v, before %v", a, b)
		}
		if a, b := dm.Model.Rejection(), before.Model.Rejection(); a != b {
			t.Errorf("rejection %+v, before %+v", a, b)
		}
		if last := m.hist[len(m.hist)-1].Version; last != dm.Model.Version() {
			t.Errorf("the history ends at version %d, the model is at %d", last, dm.Model.Version())
		}
		return nil
	})

	// unlearn goes on from the learn before: the model as created
	if err := m.unlearn(); err != nil {
		t.Fatalf("unlearn: %v", err)
	}
	m.read(func(dm *deploy.Model, _ *predictor) error {
		if n := dm.Model.Classes().Len(); n != 0 || dm.Model.Samples() != 0 {
			t.Errorf("after unlearn: %d classes, %d samples; want none", n, dm.Model.Samples())
		}
		return nil
	})
	if err := m.unlearn(); statusOf(err) != FLYCL_E_NO_UNDO {
		t.Errorf("a second unlearn: %v, want FLYCL_E_NO_UNDO", err)
	}
}
