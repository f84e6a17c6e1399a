package analysis

import (
	"context"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/features"
)

// CenterRows subtracts the column means of the n×d row-major matrix x, in
// place (in float64, so the means of large sets stay exact enough).
func CenterRows(x []float32, d int) {
	n := len(x) / d
	if n == 0 {
		return
	}
	mean := make([]float64, d)
	for i := 0; i < n; i++ {
		for j, v := range x[i*d : (i+1)*d] {
			mean[j] += float64(v)
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	for i := 0; i < n; i++ {
		row := x[i*d : (i+1)*d]
		for j := range row {
			row[j] = float32(float64(row[j]) - mean[j])
		}
	}
}

// FirstClassPrototypes computes the prototype correlations (Figure 3) of
// the first (up to) ten classes of order with a trained model, on their
// training samples in train.
func FirstClassPrototypes(ctx context.Context, model *flycl.Model, train *features.Set, order []int) (*Stages, error) {
	classes := order[:min(10, len(order))]
	x, y, _ := train.Subset(classes)
	return PrototypeCorrelations(ctx, model, x, y, classes)
}
