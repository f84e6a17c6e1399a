package store

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/flycl/flycl/app/deploy"
)

// TestViewSeesOnlyWholeChanges: View runs under the store's lock, so a
// reader never sees a change half made. An online learn in mini-batches
// of one sample moves the model through a version per sample inside one
// Update; a reader viewing the model all along must see only versions
// an Update left it at (without the lock it would see the versions in
// between, and the race detector the unsynchronised reads). Inside the
// change the lock is held: View cannot start.
func TestViewSeesOnlyWholeChanges(t *testing.T) {
	ctx := context.Background()
	st := create(t, filepath.Join(t.TempDir(), "m.flycl"), true)
	defer st.Close()
	const samples = 6
	x := make([]float32, samples*3)
	names := make([]string, samples)
	for i := range names {
		names[i] = []string{"a", "b", "c"}[i%3]
		x[i*3+i%3] = 1 + float32(i)/10
	}
	opt := deploy.LearnOptions{Online: true, Batch: 1}

	var mu sync.Mutex
	done := make(chan struct{})
	seen := map[uint64]bool{}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			st.View(func(m *deploy.Model) error {
				mu.Lock()
				seen[m.Model.Version()] = true
				mu.Unlock()
				return nil
			})
		}
	}()
	acked := map[uint64]bool{0: true}
	for range 4 {
		err := st.Update(ctx, func(m *deploy.Model) (Change, error) {
			if st.vmu.TryRLock() {
				st.vmu.RUnlock()
				t.Error("View could start while a change was being made")
			}
			before := PriorOf(m)
			if _, err := m.Learn(ctx, x, names, nil, opt); err != nil {
				return Change{}, err
			}
			return Change{Entry: LearnEntry(m.Model.Version(), before, x, names, 3, opt)}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		st.View(func(m *deploy.Model) error { acked[m.Model.Version()] = true; return nil })
	}
	close(done)
	wg.Wait()
	if len(acked) != 5 || !acked[4*samples] {
		t.Fatalf("versions after each learn %v: want 0 and a step of %d per learn", acked, samples)
	}
	for v := range seen {
		if !acked[v] {
			t.Errorf("a reader saw version %d, which no Update left the model at (acknowledged: %v)", v, acked)
		}
	}
}
