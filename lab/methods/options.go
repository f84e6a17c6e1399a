package methods

import (
	"fmt"
	"math"

	"github.com/flycl/flycl/lab/experiment"
	"github.com/flycl/flycl/projection"
)

// Check checks the settings of the methods built on Fly-CL that a user
// gives (flycl-lab run's flags of the same names); every error names the
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

// UseW makes w Fly-CL's projection: m and p are then w's, and the
// configuration must still be valid (flycl.Config.Check: k at most m).
// name says where w came from, for the error.
func (o *Options) UseW(w *projection.Matrix, name string) error {
	o.W = w
	o.FlyCL.M, o.FlyCL.P = w.M, w.P
	if err := o.FlyCL.Check(); err != nil {
		return fmt.Errorf("--w %s (m = its rows): %w", name, err)
	}
	return nil
}

// Inputs describe where a run's features came from, for its result file:
// the data as the user gave it ("" for feature files), the backbone spec,
// preset and output ("" when the features were given) and the files read.
type Inputs struct {
	Data, Backbone, Preset, Output string
	Sources                        experiment.Sources
}

// ResultConfig is the configuration a run records in result.json: the
// methods' settings, Fly-CL's configuration as its model completes it
// (flycl.Config.WithDefaults: with no grid, the λ scale's), where the
// features came from (Output only with a backbone; Data "features" for
// feature files), the identity of every file read (Sources.Identify) and
// the SHA-256 of Fly-CL's W for d-dimensional features: the imported one,
// or the one its seed gives (none when p exceeds d).
func (o Options) ResultConfig(d int, in Inputs) (*experiment.Config, error) {
	cfg := o.FlyCL.WithDefaults()
	c := &experiment.Config{
		Config:        cfg,
		HebbianPasses: o.HebbianPasses,
		OnlineBatch:   o.OnlineBatch, OnlineLambda: o.OnlineLambda,
		Data: in.Data, Backbone: in.Backbone, Preset: in.Preset,
	}
	if c.Backbone != "" {
		c.Output = in.Output
	}
	if c.Data == "" {
		c.Data = "features"
	}
	var err error
	if c.Inputs, err = in.Sources.Identify(); err != nil {
		return nil, err
	}
	w := o.W
	if w == nil && cfg.P <= d {
		if w, err = projection.Generate(cfg.M, d, cfg.P, cfg.Seed); err != nil {
			return nil, err
		}
	}
	if w != nil {
		c.WSHA256 = w.Digest()
	}
	return c, nil
}
