package methods

import (
	"fmt"
	"math"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/projection"
)

// Check checks the settings of the methods built on Fly-CL that a user
// gives (flycl run's flags of the same names); every error names the
// setting and quotes the value. A zero value is not a default here: the
// command line always gives one.
func (o Options) Check() error {
	if o.HebbianPasses < 1 {
		return fmt.Errorf("--hebbian-passes %d: must be at least 1", o.HebbianPasses)
	}
	if o.OnlineBatch < 1 {
		return fmt.Errorf("--online-batch %d: must be at least 1", o.OnlineBatch)
	}
	if o.OnlineLambda < 0 || math.IsNaN(o.OnlineLambda) || math.IsInf(o.OnlineLambda, 0) {
		return fmt.Errorf("--online-lambda %g: must be a positive number (or 0 for GCV on every mini-batch)", o.OnlineLambda)
	}
	return nil
}

// UseW makes w Fly-CL's projection: m and p are then w's, and k must not
// exceed m. name says where w came from, for the error.
func (o *Options) UseW(w *projection.Matrix, name string) error {
	o.W = w
	o.FlyCL.M, o.FlyCL.P = w.M, w.P
	if o.FlyCL.K > o.FlyCL.M {
		return fmt.Errorf("--k %d: must be at most m=%d (the rows of --w %s)", o.FlyCL.K, o.FlyCL.M, name)
	}
	return nil
}

// CheckDim checks a configuration against the feature dimension d: W
// cannot have more non-zeros per row than the features have dimensions.
// The error suggests the paper's ratio p/d ≈ 0.4.
func CheckDim(cfg flycl.Config, d int) error {
	if cfg.P > d {
		return fmt.Errorf("--p %d: W cannot have more non-zeros per row than the features have dimensions (d=%d); give --p at most %d (the paper keeps p/d ≈ 0.4: --p %d for d=%d)",
			cfg.P, d, d, max(1, int(math.Round(0.39*float64(d)))), d)
	}
	return nil
}
