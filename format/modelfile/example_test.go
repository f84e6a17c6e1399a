package modelfile_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
)

// Save a model after one task and continue learning from the file.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "flycl")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.flycl")

	model, _ := flycl.New(flycl.Config{M: 200, P: 2, K: 60, Lambdas: []float64{1, 10}}, 3)
	model.Learn(ctx, []float32{1, 0, 0, 0, 1, 0}, []int{7, 8}, nil)
	if err := modelfile.SaveModel(path, model); err != nil {
		panic(err)
	}
	resumed, err := modelfile.LoadModel(path)
	if err != nil {
		panic(err)
	}
	resumed.Learn(ctx, []float32{0, 0, 1}, []int{9}, nil)
	fmt.Println(resumed.Classes().Labels())
	// Output: [7 8 9]
}
