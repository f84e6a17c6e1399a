package server

import (
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
)

// TestOpen: Open gives the writer or the reader that its options ask for,
// as the file and its lock allow: the truth is what each backend does
// (a reader refuses a learn with ErrReadOnly; a writer's learn is in the
// file store.Load reads back; a second writer meets the lock).
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	saved := filepath.Join(dir, "saved.flycl")
	create := func() (*flycl.Model, error) { return flycl.New(testConfig(), testDim) }
	ctx := context.Background()
	x, y := clusters(rand.New(rand.NewPCG(1, 2)), []int{0, 1}, 4)
	var flat []float32
	names := make([]string, len(y))
	for i := range x {
		flat = append(flat, x[i]...)
		names[i] = className(y[i])
	}
	{ // a saved model, its writer closed
		be, err := Open(ctx, saved, OpenOptions{File: FileOptions{Create: create}})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := be.Learn(ctx, flat, names, deploy.LearnOptions{}); err != nil {
			t.Fatal(err)
		}
		be.Close()
	}
	holder, err := Open(ctx, filepath.Join(dir, "held.flycl"), OpenOptions{File: FileOptions{Create: create}})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, _, err := holder.Learn(ctx, flat, names, deploy.LearnOptions{}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name     string
		file     string
		o        OpenOptions
		readOnly bool  // want a ReadOnlyBackend (else a FileBackend)
		err      error // want an error wrapping it (nil: none)
		locked   bool  // want a *modelfile.LockedError
	}{
		{name: "writer of a saved file", file: "saved.flycl", o: OpenOptions{}},
		{name: "reader of a saved file", file: "saved.flycl", o: OpenOptions{ReadOnly: true}, readOnly: true},
		{name: "writer creates", file: "new.flycl", o: OpenOptions{File: FileOptions{Create: create}}},
		{name: "writer without Create", file: "missing.flycl", o: OpenOptions{}, err: fs.ErrNotExist},
		{name: "reader does not create", file: "missing.flycl", o: OpenOptions{ReadOnly: true, File: FileOptions{Create: create}}, err: fs.ErrNotExist},
		{name: "second writer", file: "held.flycl", o: OpenOptions{File: FileOptions{Create: create}}, locked: true},
		{name: "reader beside the writer", file: "held.flycl", o: OpenOptions{ReadOnly: true}, readOnly: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			be, err := Open(ctx, filepath.Join(dir, tc.file), tc.o)
			var locked *modelfile.LockedError
			switch {
			case tc.locked:
				if !errors.As(err, &locked) {
					t.Fatalf("got %v; want a LockedError", err)
				}
				return
			case tc.err != nil:
				if !errors.Is(err, tc.err) {
					t.Fatalf("got %v; want %v", err, tc.err)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			defer be.Close()
			_, _, lerr := be.Learn(ctx, flat, names, deploy.LearnOptions{})
			if tc.readOnly {
				if _, ok := be.(*ReadOnlyBackend); !ok || !errors.Is(lerr, ErrReadOnly) {
					t.Fatalf("%T, learn: %v; want a ReadOnlyBackend refusing it with ErrReadOnly", be, lerr)
				}
				if v, version := be.Current().Version(), savedModel(t, filepath.Join(dir, tc.file)).Model.Version(); v != version {
					t.Errorf("reader serves version %d, the file has %d", v, version)
				}
				return
			}
			if _, ok := be.(*FileBackend); !ok || lerr != nil {
				t.Fatalf("%T, learn: %v; want a FileBackend that learns", be, lerr)
			}
			if got, want := savedModel(t, filepath.Join(dir, tc.file)).Model.Version(), be.Current().Version(); got != want {
				t.Errorf("the file holds version %d after the learn, the writer serves %d", got, want)
			}
		})
	}
}
