package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/store"
)

// config is a tiny model's: m = 64 for features of d = 8.
var config = flycl.Config{M: 64, P: 4, K: 16, Seed: 1, Lambdas: []float64{0.1, 1, 10}}

const d = 8

// samples returns n samples (rows of d) of a class whose features are
// large in the coordinates from c on, with a small deterministic offset
// per sample.
func samples(c, n int) []float32 {
	x := make([]float32, n*d)
	for i := range n {
		for j := range d {
			v := float32(0.1 * float32((i+j)%3))
			if j >= c && j < c+3 {
				v += 2
			}
			x[i*d+j] = v
		}
	}
	return x
}

// learn is the change that teaches the model x, of the classes names, and
// records it in the journal (so that an undo can take it back out).
func learn(ctx context.Context, x []float32, names []string) func(*deploy.Model) (store.Change, error) {
	return func(m *deploy.Model) (store.Change, error) {
		before := store.PriorOf(m)
		if _, err := m.Learn(ctx, x, names, nil, deploy.LearnOptions{}); err != nil {
			return store.Change{}, err
		}
		return store.Change{Entry: store.LearnEntry(m.Model.Version(), before, x, names, d, deploy.LearnOptions{})}, nil
	}
}

// A model file's life: Open a file that does not exist yet, give it its
// model with Create, change it with Update (acknowledged only once the
// change is saved; a change that fails leaves the model as the file has
// it), read it with View, and open it again read-only.
// (Store.Learn is the Update below, with the checks flycl learn makes.)
func ExampleStore() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "flycl-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "cam.flycl")

	st, err := store.Open(ctx, path, &store.Options{Journal: true, Command: "example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	st.View(func(m *deploy.Model) error {
		fmt.Println("exists:", st.Exists(), "model:", m != nil)
		return nil
	})
	m, err := deploy.New(config, d, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := st.Create(m); err != nil { // written by the first Update
		fmt.Println(err)
		return
	}

	x := append(samples(0, 3), samples(4, 3)...)
	names := []string{"cat", "cat", "cat", "dog", "dog", "dog"}
	if err := st.Update(ctx, learn(ctx, x, names)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("exists:", st.Exists())

	// a change that fails (features of the wrong dimension) is not saved,
	// and the model is the file's again
	err = st.Update(ctx, learn(ctx, make([]float32, d+1), []string{"owl"}))
	fmt.Println("refused:", err != nil)

	err = st.View(func(m *deploy.Model) error {
		fmt.Println("version", m.Model.Version(), "classes", m.Model.Classes().Names(), "samples", m.Model.Classes().Counts())
		labels, err := m.Model.Predictor().Predict(ctx, append(samples(0, 1), samples(4, 1)...))
		if err != nil {
			return err
		}
		for _, l := range labels {
			fmt.Println("predicted", m.Model.Classes().Name(l))
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	if err := st.Close(); err != nil {
		fmt.Println(err)
		return
	}

	// read-only: no lock taken, no change allowed
	ro, err := store.Open(ctx, path, &store.Options{ReadOnly: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ro.Close()
	err = ro.View(func(m *deploy.Model) error {
		fmt.Println("read-only: version", m.Model.Version(), "classes", m.Model.Classes().Names())
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	err = ro.Update(ctx, learn(ctx, samples(2, 2), []string{"owl", "owl"}))
	fmt.Println(errors.Is(err, store.ErrReadOnly))
	// Output:
	// exists: false model: false
	// exists: true
	// refused: true
	// version 1 classes [cat dog] samples [3 3]
	// predicted cat
	// predicted dog
	// read-only: version 1 classes [cat dog]
	// true
}

// Undo takes the last learn back out exactly, as a new version recorded in
// the journal (Options.Journal keeps one); with a version it takes back
// every learn after it. Options.Create gives a missing file its model.
func ExampleStore_Undo() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "flycl-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(ctx, filepath.Join(dir, "cam.flycl"), &store.Options{Journal: true, Command: "example",
		Create: func() (*deploy.Model, error) { return deploy.New(config, d, nil, nil) }})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	changes := []struct {
		x     []float32
		names []string
	}{
		{append(samples(0, 2), samples(4, 2)...), []string{"cat", "cat", "dog", "dog"}},
		{samples(2, 2), []string{"owl", "owl"}},
	}
	for _, c := range changes {
		if err := st.Update(ctx, learn(ctx, c.x, c.names)); err != nil {
			fmt.Println(err)
			return
		}
	}
	st.View(func(m *deploy.Model) error {
		fmt.Println("version", m.Model.Version(), "classes", m.Model.Classes().Names())
		return nil
	})

	undone, err := st.Undo(ctx, nil) // the last learn
	if err != nil {
		fmt.Println(err)
		return
	}
	st.View(func(m *deploy.Model) error {
		fmt.Println("undid", len(undone), "learn: version", m.Model.Version(), "classes", m.Model.Classes().Names())
		return nil
	})

	to := uint64(0) // back to the model as created
	undone, err = st.Undo(ctx, &to)
	if err != nil {
		fmt.Println(err)
		return
	}
	st.View(func(m *deploy.Model) error {
		fmt.Println("undid", len(undone), "learn: version", m.Model.Version(), "classes", m.Model.Classes().Names(), "samples", m.Model.Samples())
		return nil
	})

	hist, err := st.History()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("journal entries:", len(hist)) // two learns, two undos
	// Output:
	// version 2 classes [cat dog owl]
	// undid 1 learn: version 3 classes [cat dog]
	// undid 1 learn: version 4 classes [] samples 0
	// journal entries: 4
}
