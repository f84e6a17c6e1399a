package deploy

import (
	"math"
	"slices"

	"github.com/flycl/flycl"
)

// ImageM is the expansion dimension m of a new model created from images
// (DefaultImageConfig): the paper's m = 10000, which the dual form
// (flycl.Config.Dual) makes cheap for the few photos such a model sees
// first (docs/PERFORMANCE.md, "The dual form").
const ImageM = 10000

// DefaultImageConfig is the configuration of a new model that learns from
// images of a backbone with d-dimensional features (flycl learn and serve,
// the page): sized for a few photos on a small machine rather than for
// the paper's benchmarks (flycl.DefaultConfig, m = 10000). It has
// m = ImageM, k = 0.3·m as the paper (flycl.KForM), p = the paper's 300 of d = 768
// scaled to d, the relative λ grid (flycl.DefaultRelativeLambdas: features
// of any backbone's scale) and GCV widening the grid while its optimum is
// at an edge (flycl.Config.WidenGrid), and the dual form while the samples
// are at most flycl.DualLimit(m), where GCV then takes the minimum over
// every λ > 0.
func DefaultImageConfig(d int) flycl.Config {
	c := flycl.DefaultConfig()
	c.M = ImageM
	c.K = flycl.KForM(c.M)
	c.P = max(1, min(d, int(math.Round(float64(c.P)*float64(d)/768))))
	c.LambdaScale, c.Lambdas, c.WidenGrid = flycl.LambdaRelative, slices.Clone(flycl.DefaultRelativeLambdas), true
	c.Dual = flycl.DualLimit(c.M)
	return c
}
