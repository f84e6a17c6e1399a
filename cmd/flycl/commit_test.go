package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/deploy"
	"github.com/flycl/flycl/modelfile"
)

// TestCommitLockRemoved: two CLI writers with the lock file removed
// between them (as `rm m.flycl.lock` does): the second takes a lock of
// its own and saves; the first must then neither write the model file
// nor acknowledge (commit fails with ErrLockLost), so the second's
// acknowledged change stays. Without the check the first overwrote it.
func TestCommitLockRemoved(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.flycl")
	cfg := flycl.Config{M: 64, P: 2, K: 16, Seed: 1, Lambdas: []float64{1}}
	newModel := func(class string) *deploy.Model {
		m, err := deploy.New(cfg, 3, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Learn(context.Background(), []float32{1, 2, 3, 3, 2, 1}, []string{class, class + "2"}, nil, deploy.LearnOptions{}); err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, err := modelfile.TakeLock(context.Background(), path, modelfile.LockOptions{Command: "A"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Unlock()
	if err := os.Remove(modelfile.LockPath(path)); err != nil {
		t.Fatal(err)
	}
	b, err := modelfile.TakeLock(context.Background(), path, modelfile.LockOptions{Command: "B"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Unlock()
	if err := commit(b, newModel("b"), path); err != nil {
		t.Fatalf("second writer: %v", err)
	}
	if err := commit(a, newModel("a"), path); !errors.Is(err, modelfile.ErrLockLost) {
		t.Fatalf("first writer after its lock file was removed: %v", err)
	}
	m, err := deploy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.LabelOf("b"); !ok {
		t.Fatalf("the second writer's acknowledged learn was overwritten: classes %v", m.ClassNames())
	}
}
