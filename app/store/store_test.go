package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
)

var cfg = flycl.Config{M: 64, P: 2, K: 16, Seed: 1, Lambdas: []float64{0.1, 1, 10}}

// learn is a change learning two samples of class (and class2).
func learn(ctx context.Context, class string, v float32) func(*deploy.Model) (Change, error) {
	return func(m *deploy.Model) (Change, error) {
		x := []float32{1 + v, 2, 3 - v, 3, 2 + v, 1}
		names := []string{class, class + "2"}
		before := PriorOf(m)
		if _, err := m.Learn(ctx, x, names, nil, deploy.LearnOptions{}); err != nil {
			return Change{}, err
		}
		return Change{Entry: LearnEntry(m.Model.Version(), before, x, names, 3, deploy.LearnOptions{})}, nil
	}
}

func create(t *testing.T, path string, journal bool) *Store {
	t.Helper()
	st, err := Open(context.Background(), path, &Options{Journal: journal, Command: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	if st.model == nil {
		m, err := deploy.New(cfg, 3, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Create(m); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// TestUpdateRollback: a change that fails, or panics, after it altered
// the model leaves the file as it was and the store's model read back
// from it (the next change goes on from the last durable state); a
// change that succeeds is in the file and, with a journal, in its
// history; the lock file is gone after Close.
func TestUpdateRollback(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.flycl")
	st := create(t, path, true)
	if err := st.Update(ctx, learn(ctx, "a", 0)); err != nil {
		t.Fatal(err)
	}
	saved, _ := os.ReadFile(path)
	boom := errors.New("boom")
	err := st.Update(ctx, func(m *deploy.Model) (Change, error) {
		learn(ctx, "b", 1)(m) // altered...
		return Change{}, boom // ...then failed
	})
	if !errors.Is(err, boom) {
		t.Fatalf("failed change: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(saved) {
		t.Fatal("a failed change wrote the file")
	}
	if _, ok := st.model.Model.Classes().LabelOf("b"); ok || st.model.Model.Version() != 1 {
		t.Fatalf("after a failed change the model is at version %d with %v", st.model.Model.Version(), st.model.Model.Classes().Names())
	}
	func() {
		defer func() {
			if p := recover(); p == nil {
				t.Fatal("the panic was swallowed")
			}
		}()
		st.Update(ctx, func(m *deploy.Model) (Change, error) {
			learn(ctx, "c", 2)(m)
			panic("a bug in the change")
		})
	}()
	if _, ok := st.model.Model.Classes().LabelOf("c"); ok || st.model.Model.Version() != 1 {
		t.Fatalf("after a panicking change the model is at version %d with %v", st.model.Model.Version(), st.model.Model.Classes().Names())
	}
	if err := st.Update(ctx, learn(ctx, "d", 3)); err != nil {
		t.Fatal(err)
	}
	hist, err := st.History()
	if err != nil || len(hist) != 2 || hist[1].Version != 2 || !slices.Contains(hist[1].Names, "d") {
		t.Fatalf("history %d entries, %v", len(hist), err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(modelfile.LockPath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lock file after Close: %v", err)
	}
	m, err := Load(path)
	if err != nil || m.Model.Version() != 2 || !slices.Equal(m.Model.Classes().Names(), []string{"a", "a2", "d", "d2"}) {
		t.Fatalf("file: %v", err)
	}
}

// TestUpdateLockRemoved: two writers with the lock file removed between
// them (`rm m.flycl.lock`): the second opens and saves; the first's
// Update then fails with ErrLockLost without writing, so the second's
// acknowledged change stays. Without the lock checks the first
// overwrote it.
func TestUpdateLockRemoved(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.flycl")
	a := create(t, path, false)
	defer a.Close()
	if err := os.Remove(modelfile.LockPath(path)); err != nil {
		t.Fatal(err)
	}
	b := create(t, path, false)
	defer b.Close()
	if err := b.Update(ctx, learn(ctx, "b", 0)); err != nil {
		t.Fatalf("second writer: %v", err)
	}
	if err := a.Update(ctx, learn(ctx, "a", 1)); !errors.Is(err, modelfile.ErrLockLost) {
		t.Fatalf("first writer after its lock file was removed: %v", err)
	}
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Model.Classes().LabelOf("b"); !ok {
		t.Fatalf("the second writer's acknowledged learn was overwritten: %v", m.Model.Classes().Names())
	}
}

// TestUndoAndMerge: Undo takes the last learn back (a new version equal
// to the one before it), Undo to a version takes back every learn after
// it, and a merge entry in the history stops an undo from reaching past
// it.
func TestUndoAndMerge(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.flycl")
	st := create(t, path, true)
	defer st.Close()
	for i, c := range []string{"a", "b", "c"} {
		if err := st.Update(ctx, learn(ctx, c, float32(i))); err != nil {
			t.Fatal(err)
		}
	}
	done, err := st.Undo(ctx, nil)
	if err != nil || len(done) != 1 || done[0].Undoes != 3 || st.model.Model.Version() != 4 {
		t.Fatalf("undo: %d, %v", len(done), err)
	}
	one := uint64(1)
	if done, err = st.Undo(ctx, &one); err != nil || len(done) != 1 || done[0].Undoes != 2 {
		t.Fatalf("undo to 1: %d, %v", len(done), err)
	}
	if got := st.model.Model.Classes().Names(); !slices.Equal(got, []string{"a", "a2"}) {
		t.Fatalf("classes after undo to 1: %v", got)
	}
	err = st.Update(ctx, func(m *deploy.Model) (Change, error) {
		return Change{Entry: MergeEntry(m.Model.Version()+1, []string{"z"}, 3)}, learnVersionBump(ctx, m)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Undo(ctx, nil); !errors.Is(err, ErrNoUndo) || !strings.Contains(err.Error(), "merge") {
		t.Fatalf("undo past a merge: %v", err)
	}
}

// learnVersionBump learns one more sample, as a merge would change the
// model (the merge entry above records its version).
func learnVersionBump(ctx context.Context, m *deploy.Model) error {
	_, err := m.Learn(ctx, []float32{1, 1, 1}, []string{"z"}, nil, deploy.LearnOptions{})
	return err
}

// TestOpenMissingFolder: a model path in a folder that does not exist
// says so.
func TestOpenMissingFolder(t *testing.T) {
	_, err := Open(context.Background(), filepath.Join(t.TempDir(), "no", "m.flycl"), nil)
	if err == nil || !strings.Contains(err.Error(), "folder") || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("%v", err)
	}
}

// TestUndoEach: the one undo loop (flycl undo's and the server's) calls
// back after every learn taken back with the learn's entry and its
// undo's, newest first, each already in the file (Load of the file
// there gives the undo's version and the learn's classes gone); an undo
// the journal cannot do (to a version after the model's) wraps
// ErrNoUndo, calls back nothing and leaves the file unchanged.
func TestUndoEach(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.flycl")
	st := create(t, path, true)
	defer st.Close()
	for i, c := range []string{"a", "b", "c"} {
		if err := st.Update(ctx, learn(ctx, c, float32(i))); err != nil {
			t.Fatal(err)
		}
	}
	saved, _ := os.ReadFile(path)
	ten := uint64(10)
	if done, err := st.UndoEach(ctx, &ten, func(_, _ *modelfile.JournalEntry) { t.Error("called back for a refused undo") }); !errors.Is(err, ErrNoUndo) || len(done) != 0 {
		t.Fatalf("undo to 10 at version 3: %d done, %v; want ErrNoUndo", len(done), err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(saved) {
		t.Fatal("a refused undo wrote the file")
	}
	one := uint64(1)
	var learns []uint64
	done, err := st.UndoEach(ctx, &one, func(learn, undo *modelfile.JournalEntry) {
		learns = append(learns, learn.Version)
		if learn.Op != "learn" || undo.Undoes != learn.Version {
			t.Errorf("called back with a %s of version %d and an undo of %d", learn.Op, learn.Version, undo.Undoes)
		}
		m, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if m.Model.Version() != undo.Version || slices.Contains(m.Model.Classes().Names(), learn.Names[0]) {
			t.Errorf("called back before the undo of %d was in the file: it holds version %d with %v", learn.Version, m.Model.Version(), m.Model.Classes().Names())
		}
	})
	if err != nil || len(done) != 2 {
		t.Fatalf("undo to 1: %d done, %v", len(done), err)
	}
	if !slices.Equal(learns, []uint64{3, 2}) {
		t.Fatalf("called back for the learns %v, want [3 2]", learns)
	}
	if got := st.model.Model.Classes().Names(); !slices.Equal(got, []string{"a", "a2"}) {
		t.Fatalf("after the undo to 1 the classes are %v", got)
	}
}
