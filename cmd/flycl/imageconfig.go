package main

import (
	"math"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
)

// newConfig is the configuration of a new model for d-dimensional
// features: the flags' (config), except that a model learning from images
// (through a backbone) takes deploy.DefaultImageConfig for every size and
// λ flag not given (--k follows a given --m as 0.3·m), so that flycl learn,
// serve and the page create models sized for a few photos while flycl run
// keeps the paper's m = 10000.
func (f *modelFlags) newConfig(d int, images bool) (flycl.Config, error) {
	if !images {
		return f.config()
	}
	f.bound()
	img := deploy.DefaultImageConfig(d)
	changed := f.changed
	g := f.cfg // the sizes not given are the image defaults', checked by check
	if !changed("m") {
		g.M = img.M
	}
	switch {
	case changed("k"):
	case changed("m"):
		g.K = max(1, int(math.Round(0.3*float64(g.M))))
	default:
		g.K = img.K
	}
	if !changed("p") {
		g.P = img.P
	}
	cfg, err := f.check(g)
	if err != nil {
		return cfg, err
	}
	if !changed("lambdas") && !changed("lambda-scale") {
		cfg.Lambdas, cfg.LambdaScale = img.Lambdas, img.LambdaScale
		if !changed("widen-grid") {
			cfg.WidenGrid = img.WidenGrid
		}
	}
	return cfg, nil
}
