package projection_test

import (
	"context"
	"fmt"

	"github.com/flycl/flycl/projection"
)

// Expand one 4-dimensional feature vector to 6 coordinates with 2
// non-zeros per row of W, then keep the 2 largest.
func Example() {
	w, _ := projection.Generate(6, 4, 2, 42)
	x := []float32{1, 0, -1, 2}
	h := make([]float32, 6)
	w.Apply(context.Background(), projection.Auto, x, 1, h)
	projection.TopK(h, 1, 6, 2, projection.Signed)
	kept := 0
	for _, v := range h {
		if v != 0 {
			kept++
		}
	}
	fmt.Println("non-zeros per row of W:", w.P, "kept:", kept)
	// Output: non-zeros per row of W: 2 kept: 2
}
