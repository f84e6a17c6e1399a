package pipeline

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/format/modelfile"
)

// TestFinalizerWritesThroughStore checks the finalizer's local model
// write (saveModel), which goes through the store: a new file loads as
// the model learned (scores equal bit for bit: the same float32 file
// content); a file another writer holds the lock of is refused with a
// *modelfile.LockedError and not created; an existing model file is
// refused and left byte for byte as it was.
func TestFinalizerWritesThroughStore(t *testing.T) {
	ctx := context.Background()
	cfg := flycl.DefaultConfig()
	cfg.M, cfg.K, cfg.P = 64, 8, 4
	const d, n = 16, 12
	m, err := flycl.New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	labels := make([]int, n)
	for i := range labels {
		labels[i] = i % 3
	}
	if _, err := m.Learn(ctx, x, labels, &flycl.LearnOptions{Lambda: 1}); err != nil {
		t.Fatal(err)
	}
	sf := &modelfile.StatsFile{}
	dir := t.TempDir()

	// another writer holds the lock: refused, nothing written
	locked := filepath.Join(dir, "locked.flycl")
	lk, err := modelfile.TakeLock(ctx, locked, modelfile.LockOptions{Command: "a test"})
	if err != nil {
		t.Fatal(err)
	}
	var le *modelfile.LockedError
	if err := saveModel(ctx, locked, m, sf); !errors.As(err, &le) {
		t.Errorf("saveModel while another holds the lock: %v, want a *modelfile.LockedError", err)
	}
	lk.Unlock()
	if _, err := os.Stat(locked); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("saveModel under another's lock created the file (stat: %v)", err)
	}

	// a new file: loads as the model learned
	path := filepath.Join(dir, "m.flycl")
	if err := saveModel(ctx, path, m, sf); err != nil {
		t.Fatal(err)
	}
	got, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Predictor().Scores(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	have, err := got.Model.Predictor().Scores(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	if len(have) != len(want) || got.Model.Version() != m.Version() {
		t.Fatalf("loaded model: %d scores, version %d; want %d, version %d", len(have), got.Model.Version(), len(want), m.Version())
	}
	for i := range want {
		if have[i] != want[i] {
			t.Fatalf("score %d of the saved model is %g, the learned model's %g", i, have[i], want[i])
		}
	}
	if _, err := os.Stat(modelfile.LockPath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock file is left behind (stat: %v)", err)
	}

	// an existing model file: refused and unchanged
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := flycl.New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := saveModel(ctx, path, m2, sf); !errors.Is(err, ErrModelExists) {
		t.Errorf("saveModel onto an existing model file: %v, want ErrModelExists", err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("saveModel onto an existing model file changed it")
	}
	// and the plan refuses it before any work
	if _, err := MakePlan(Options{Out: path}); !errors.Is(err, ErrModelExists) {
		t.Errorf("MakePlan with an existing local model file as Out: %v, want ErrModelExists", err)
	}
}
