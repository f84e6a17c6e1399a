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
	if !images || f.fs == nil {
		return f.config()
	}
	img := deploy.DefaultImageConfig(d)
	changed := f.fs.Changed
	g := *f // the sizes not given are the image defaults', checked by config
	if !changed("m") {
		g.m = img.M
	}
	switch {
	case changed("k"):
	case changed("m"):
		g.k = max(1, int(math.Round(0.3*float64(g.m))))
	default:
		g.k = img.K
	}
	if !changed("p") {
		g.p = img.P
	}
	cfg, err := g.config()
	if err != nil {
		return cfg, err
	}
	if !changed("lambdas") && !changed("lambda-scale") {
		cfg.Lambdas, cfg.LambdaScale, cfg.WidenGrid = img.Lambdas, img.LambdaScale, img.WidenGrid
	}
	return cfg, nil
}
