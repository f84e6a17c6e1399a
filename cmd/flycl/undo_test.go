package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/internal/codec"
)

// TestUndoHistoryForgetFromJournal: flycl learn --journal records every
// learn; history lists them; undo takes the last back out, so the model
// has the classes, counts and λ, and predicts as, a model that never
// learned it; undo --to goes back further; and forget without data is
// exact when the journal holds the class's samples.
func TestUndoHistoryForgetFromJournal(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.flycl")
	ref := filepath.Join(dir, "ref.flycl")
	files := []string{filepath.Join(dir, "a.npz"), filepath.Join(dir, "b.npz"), filepath.Join(dir, "c.npz")}
	blobs(t, files[0], 1, 16, 8, "ant", "bee")
	blobs(t, files[1], 2, 16, 8, "cat", "bee")
	blobs(t, files[2], 3, 16, 8, "dog")
	for i, f := range files {
		args := append([]string{"learn", "--model", model, "--features", f, "--quiet"}, smallModel...)
		if i == 0 {
			args = append(args, "--journal")
		}
		if _, err := runCLI(t, args...); err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			if _, err := runCLI(t, append([]string{"learn", "--model", ref, "--features", f, "--quiet"}, smallModel...)...); err != nil {
				t.Fatal(err)
			}
		}
	}
	out, err := runCLI(t, "history", "--model", model)
	if err != nil || strings.Count(out, "learn") != 3 {
		t.Fatalf("history: %v\n%s", err, out)
	}
	if out, err = runCLI(t, "undo", "--model", model); err != nil || !strings.Contains(out, "undid the learn of version 3") {
		t.Fatalf("undo: %v\n%s", err, out)
	}
	same := func(what, a, b string) {
		t.Helper()
		ma, err := store.Load(a)
		if err != nil {
			t.Fatal(err)
		}
		mb, err := store.Load(b)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ma.Model.Classes().Names(), mb.Model.Classes().Names()) || !slices.Equal(ma.Model.Classes().Counts(), mb.Model.Classes().Counts()) || ma.Model.Lambda() != mb.Model.Lambda() {
			t.Fatalf("%s: %v %v λ=%g, want %v %v λ=%g", what, ma.Model.Classes().Names(), ma.Model.Classes().Counts(), ma.Model.Lambda(), mb.Model.Classes().Names(), mb.Model.Classes().Counts(), mb.Model.Lambda())
		}
		// the calibration of the version before, bit for bit
		if ma.Model.Rejection() != mb.Model.Rejection() || !slices.Equal(codec.CalibrationPool(ma.Model), codec.CalibrationPool(mb.Model)) {
			t.Fatalf("%s: rejection %+v (pool of %d), want %+v (pool of %d)", what, ma.Model.Rejection(), len(codec.CalibrationPool(ma.Model)), mb.Model.Rejection(), len(codec.CalibrationPool(mb.Model)))
		}
		x := make([]float32, 40*16)
		for i := range x {
			x[i] = float32((i*7919)%23) - 11
		}
		pa, err := ma.Model.Predictor().Predict(context.Background(), x)
		if err != nil {
			t.Fatal(err)
		}
		pb, _ := mb.Model.Predictor().Predict(context.Background(), x)
		if !slices.Equal(pa, pb) {
			t.Fatalf("%s: predictions differ", what)
		}
	}
	same("after undo", model, ref)
	m, _ := store.Load(model)
	if m.Model.Version() != 4 {
		t.Fatalf("version %d after an undo of version 3, want 4 (versions only grow)", m.Model.Version())
	}
	// forget without data: exact from the journal
	if out, err = runCLI(t, "forget", "--model", model, "--class", "cat"); err != nil || !strings.Contains(out, "exactly") || !strings.Contains(out, "journal") {
		t.Fatalf("forget from the journal: %v\n%s", err, out)
	}
	// (the forget is a barrier: what came before it is not undone)
	if _, err := runCLI(t, "undo", "--model", model); err == nil {
		t.Fatal("undo past a forget: accepted")
	}
}
