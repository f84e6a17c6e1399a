package watch

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/store"
)

// TestFileWatcherStart: a started watcher swaps in the version a writer
// saves (the one store.LoadFile reads back), and after stop it has
// ended: a later version is not swapped in, and stop's counts are final.
func TestFileWatcherStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cam.flycl")
	ctx := context.Background()
	st, err := store.Open(ctx, path, &store.Options{Journal: true, Checkpoints: store.Checkpoints{Entries: 100}, Command: t.Name(),
		Create: func() (*deploy.Model, error) {
			return deploy.New(flycl.Config{M: 64, P: 2, K: 16, Seed: 1, Lambdas: []float64{0.01, 0.1, 1}}, 3, nil, nil)
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	learn := func(c [3]float32, class string) {
		t.Helper()
		x := colourSamples(c, 6)
		names := make([]string, len(x)/3)
		for i := range names {
			names[i] = class
		}
		err := st.Update(ctx, func(m *deploy.Model) (store.Change, error) {
			before := store.PriorOf(m)
			if _, err := m.Learn(ctx, x, names, nil, deploy.LearnOptions{}); err != nil {
				return store.Change{}, err
			}
			return store.Change{Entry: store.LearnEntry(m.Model.Version(), before, x, names, 3, deploy.LearnOptions{})}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	version := func() uint64 { // the file's version, read on its own
		t.Helper()
		f, err := store.LoadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return f.Snapshot.Predictor().Version()
	}
	learn([3]float32{0.9, 0.1, 0.1}, "red")
	learn([3]float32{0.1, 0.1, 0.9}, "blue")
	f, err := store.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rl := NewReloading(&ModelClassifier{Extractor: meanExtractor{}, Predictor: f.Snapshot.Predictor(), Top: 2})
	const every = 5 * time.Millisecond
	fw := &FileWatcher{Path: path, Interval: every, Into: rl, Unknown: "off", Log: quiet()}
	stop := fw.Start(ctx)

	learn([3]float32{0.1, 0.9, 0.1}, "green")
	want := version()
	// no time limit of its own: a watcher that never reloads fails at go
	// test's -timeout
	for rl.Current().Predictor.Version() != want {
		time.Sleep(every)
	}
	if n := rl.Current().Predictor.Classes().Len(); n != 3 {
		t.Errorf("reloaded version %d has %d classes, want 3", want, n)
	}
	reloads, failures := stop()
	if reloads != 1 || failures != 0 {
		t.Errorf("stop: %d reloads, %d failures; want 1, 0", reloads, failures)
	}
	learn([3]float32{0.9, 0.9, 0.1}, "yellow")
	if version() == want {
		t.Fatal("the last learn did not change the file's version")
	}
	time.Sleep(20 * every)
	if v := rl.Current().Predictor.Version(); v != want {
		t.Errorf("after stop the watcher swapped in version %d (want %d kept)", v, want)
	}
	if r, _ := fw.Reloads(); r != reloads {
		t.Errorf("after stop: %d reloads, stop said %d", r, reloads)
	}
}
