package export_test

import (
	"context"
	"fmt"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/export"
)

// A model learned from two-dimensional feature vectors, exported as a
// graph from features: the file any ONNX Runtime runs.
func ExampleBuild() {
	m, err := flycl.New(flycl.Config{M: 64, P: 2, K: 16}, 2)
	if err != nil {
		panic(err)
	}
	x := []float32{1, 0, 0.9, 0.1, 0, 1, 0.1, 0.9}
	if _, err := m.Learn(context.Background(), x, []int{0, 0, 1, 1}, &flycl.LearnOptions{Lambda: 0.1}); err != nil {
		panic(err)
	}
	for label, name := range []string{"east", "north"} {
		if err := m.SetClassName(label, name); err != nil {
			panic(err)
		}
	}
	g, err := export.Build(m.Snapshot(), export.Options{})
	if err != nil {
		panic(err)
	}
	// g.ONNX is the content of the .onnx file
	fmt.Println("opset", g.Opset, "input", g.Input.Name, g.Input.Shape)
	for _, o := range g.Outputs {
		fmt.Println("output", o.Name, o.Type, o.Shape)
	}
	fmt.Println("classes", g.Classes)
	// Output:
	// opset 17 input features [-1 2]
	// output scores float32 [-1 2]
	// output class int64 [-1]
	// classes [east north]
}
