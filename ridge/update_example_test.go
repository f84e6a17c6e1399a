package ridge_test

import (
	"context"
	"fmt"

	"github.com/flycl/flycl/ridge"
)

// A learn at the factor's λ updates the factor instead of refactoring; a
// learn at another λ leaves it to the next Factor.
func ExampleAccumulator_AddUpdating() {
	const m = 4
	acc, _ := ridge.NewAccumulator(m)
	acc.Add([]float32{1, 0, 2, 0, 0, 1, 0, 3}, 2, []int{0, 1})
	acc.Factor(context.Background(), 0.5)
	up, _ := acc.AddUpdating([]float32{1, 1, 0, 0}, 1, []int{0}, 0.5)
	fmt.Println(up.Updated, acc.FactorLambda())
	up, _ = acc.AddUpdating([]float32{0, 0, 1, 1}, 1, []int{1}, 2)
	fmt.Println(up.Updated, acc.FactorLambda(), up.Reason)
	// Output:
	// true 0.5
	// false 0 λ changed from 0.5 to 2
}
