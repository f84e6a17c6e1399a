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

// The body of a command line program that keeps a model file, as flycl
// learn and flycl forget are written: open the store (it holds the file's
// lock), make one durable change through one call, print what it did.
// The store decides; the program only chooses the file and prints.
func Example_cli() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "flycl-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "cam.flycl")

	// flycl learn --model cam.flycl ... (a journal is kept: undo and an
	// exact forget without the data need it)
	st, err := store.Open(ctx, path, &store.Options{Journal: true, Command: "example learn",
		Create: func() (*deploy.Model, error) {
			return deploy.New(flycl.Config{M: 64, P: 2, K: 16, Seed: 1, Lambdas: []float64{0.1, 1, 10}}, 3, nil, nil)
		}})
	if err != nil {
		fmt.Println(err)
		return
	}
	x := []float32{1, 2, 3, 3, 2, 1, 1.5, 2, 2.5, 2.5, 2, 1.5}
	names := []string{"cat", "dog", "cat", "dog"}
	err = st.Update(ctx, func(m *deploy.Model) (store.Change, error) {
		before := store.PriorOf(m)
		if _, err := m.Learn(ctx, x, names, nil, deploy.LearnOptions{}); err != nil {
			return store.Change{}, err
		}
		return store.Change{Entry: store.LearnEntry(m.Model.Version(), before, x, names, 3, deploy.LearnOptions{})}, nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	st.View(func(m *deploy.Model) error {
		fmt.Printf("model %s: version %d, classes %v\n", filepath.Base(path), m.Model.Version(), m.Model.Classes().Names())
		return nil
	})
	st.Close()

	// flycl forget --model cam.flycl --class dog (no data: the journal
	// holds every sample dog learned, so the forget is exact)
	st, err = store.Open(ctx, path, &store.Options{Command: "example forget"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	res, err := st.Forget(ctx, "dog", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("forgot dog exactly=%v: %d samples from %s\n", res.Exact, res.Record.Samples, res.Source)
	st.View(func(m *deploy.Model) error {
		fmt.Printf("model %s: version %d, classes %v\n", filepath.Base(path), m.Model.Version(), m.Model.Classes().Names())
		return nil
	})

	// a class the model does not have: refused, nothing changed
	_, err = st.Forget(ctx, "owl", nil)
	st.View(func(m *deploy.Model) error {
		fmt.Println(errors.Is(err, flycl.ErrUnknownClass), m.Model.Version())
		return nil
	})
	// Output:
	// model cam.flycl: version 1, classes [cat dog]
	// forgot dog exactly=true: 2 samples from the model's journal
	// model cam.flycl: version 2, classes [cat]
	// true 2
}
