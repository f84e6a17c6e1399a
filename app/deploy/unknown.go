package deploy

import (
	"github.com/flycl/flycl"
	"github.com/flycl/flycl/reject"
)

// Calibrate turns on the calibration of "unknown" and of the
// probabilities (flycl.Model.SetCalibration) for a deployable model: every
// learn of samples sets the rejection threshold that keeps
// reject.DefaultKeep of its samples' leave-one-out scores, on the score
// and share the model's stored rejection names if it has one (a model
// saved before rejection existed gets the defaults from its next learn).
// New and Load call it; a caller that wraps a model of its own in a Model
// calls it too.
func Calibrate(m *flycl.Model) {
	c := reject.Calibration{}
	if r := m.Rejection(); r.Keep > 0 {
		c.Score, c.Keep = r.Score, r.Keep
	}
	if m.SetCalibration(&c) != nil {
		m.SetCalibration(&reject.Calibration{}) // the defaults are valid
	}
}
