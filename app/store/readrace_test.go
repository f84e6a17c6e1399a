package store

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flycl/flycl/app/deploy"
)

// TestReadersDuringCheckpoints: readers (LoadFile, as flycl predict,
// info and frigate read a model file; Load, as a read-only server does)
// that load the file while its writer appends changes to the journal and
// rewrites the file every 2 changes (a checkpoint, then a new journal on
// it) always get a whole model: one of the versions written, never an
// error for a journal that does not continue the file they read.
func TestReadersDuringCheckpoints(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.flycl")
	st, err := Open(ctx, path, &Options{Journal: true, Command: t.Name(), Checkpoints: Checkpoints{Entries: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := deploy.New(cfg, 3, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Create(m); err != nil {
		t.Fatal(err)
	}
	if err := st.Update(ctx, learn(ctx, "a", 0)); err != nil {
		t.Fatal(err)
	}
	var written atomic.Uint64
	written.Store(1)
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		defer close(done)
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := st.Update(ctx, learn(ctx, "a", float32(i%7)/10)); err != nil {
				done <- err
				return
			}
			written.Add(1)
		}
	}()
	reads := 0
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); reads++ {
		lo := written.Load()
		var v uint64
		if reads%2 == 0 {
			f, err := LoadFile(path)
			if err != nil {
				t.Fatalf("LoadFile after %d reads, during checkpoints: %v", reads, err)
			}
			v = f.Snapshot.Version()
		} else {
			dm, err := Load(path)
			if err != nil {
				t.Fatalf("Load after %d reads, during checkpoints: %v", reads, err)
			}
			v = dm.Model.Version()
		}
		if v < lo || v > written.Load()+1 {
			t.Fatalf("read version %d while versions %d..%d were written", v, lo, written.Load()+1)
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d reads over %d versions", reads, written.Load())
}
