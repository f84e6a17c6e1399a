package ridge_test

import (
	"context"
	"fmt"

	"github.com/flycl/flycl/ridge"
)

// GCV scores for a tiny task: two samples of two classes in 3 dimensions.
// Here K = H Hᵀ = [[2 1] [1 2]] has eigenvalues 3 and 1, so in closed form
// GCV(λ) = ½(λ/(3+λ))² + ½(λ/(1+λ))² divided by (½ λ/(3+λ) + ½ λ/(1+λ))²,
// e.g. 0.15625/0.140625 = 1.1111 at λ = 1. Two samples of two classes
// cannot generalise, so the heaviest regularisation wins.
func ExampleGCV() {
	h := []float32{
		1, 0, 1,
		0, 1, 1,
	}
	labels := []int{0, 1}
	grid := []float64{0.01, 1, 100}
	scores, _ := ridge.GCV(context.Background(), h, 2, 3, labels, 2, grid, ridge.GCVAuto)
	for i, s := range scores {
		fmt.Printf("lambda %g: %.4f\n", grid[i], s)
	}
	fmt.Println("best:", grid[ridge.BestLambda(scores)])
	// Output:
	// lambda 0.01: 1.2475
	// lambda 1: 1.1111
	// lambda 100: 1.0001
	// best: 100
}
