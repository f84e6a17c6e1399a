package main

import (
	"github.com/flycl/flycl"
)

// newConfig is the configuration of a new model for d-dimensional
// features (configflag.Flags.NewConfig: the image defaults when images).
func (f *modelFlags) newConfig(d int, images bool) (flycl.Config, error) {
	return f.bound().NewConfig(d, images)
}
