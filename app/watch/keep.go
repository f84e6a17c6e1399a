package watch

import "github.com/flycl/flycl/reject"

// ParseRejection resolves a rejection choice (--unknown, cameras.yaml's
// unknown and keep) against a model's calibrated rejection and its
// calibration pool (flycl.State's CalibrationPool): auto, off or a raw
// threshold on the model's score as reject.ParseRule reads them, or
// "keep:SHARE" (reject.ParseKeep), the threshold that keeps that share
// of the samples the model learned (reject.Rule.WithKeep), in a
// person's units.
func ParseRejection(choice string, calibrated reject.Rule, pool []float32) (reject.Rule, error) {
	keep, ok, err := reject.ParseKeep(choice)
	if err != nil {
		return reject.Rule{}, err
	}
	if !ok {
		return reject.ParseRule(choice, calibrated)
	}
	return calibrated.WithKeep(pool, keep)
}
