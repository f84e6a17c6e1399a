package main

import (
	"math"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/deploy"
)

// newConfig is the configuration of a new model for d-dimensional
// features: the flags' (config), except that a model learning from images
// (through a backbone) takes deploy.DefaultImageConfig for every size and
// λ flag not given (--k follows a given --m as 0.3·m), so that flycl learn,
// serve and the page create models sized for a few photos while flycl run
// keeps the paper's m = 10000.
func (f *modelFlags) newConfig(d int, images bool) (flycl.Config, error) {
	cfg, err := f.config()
	if err != nil || !images || f.fs == nil {
		return cfg, err
	}
	img := deploy.DefaultImageConfig(d)
	changed := f.fs.Changed
	if !changed("m") {
		cfg.M = img.M
	}
	switch {
	case changed("k"):
	case changed("m"):
		cfg.K = max(1, int(math.Round(0.3*float64(cfg.M))))
	default:
		cfg.K = img.K
	}
	if !changed("p") {
		cfg.P = img.P
	}
	if !changed("lambdas") && !changed("lambda-scale") {
		cfg.Lambdas, cfg.LambdaScale, cfg.WidenGrid = img.Lambdas, img.LambdaScale, img.WidenGrid
	}
	if cfg.K > cfg.M {
		cfg.K = cfg.M
	}
	return cfg, nil
}
