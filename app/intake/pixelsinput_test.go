package intake

import (
	"testing"

	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/vision/dataset"
)

// TestPixelsInput: raw pixels exactly for MNIST and Fashion-MNIST with no
// backbone asked for and no model pipeline; every other combination goes
// through a backbone.
func TestPixelsInput(t *testing.T) {
	mp := &modelfile.Pipeline{}
	for _, tc := range []struct {
		kind     string
		backbone string
		mp       *modelfile.Pipeline
		want     bool
	}{
		{"mnist", "", nil, true},
		{"fashion-mnist", "", nil, true},
		{"mnist", "squeezenet", nil, false},
		{"mnist", "", mp, false},
		{"cifar10", "", nil, false},
		{"cifar100", "", nil, false},
		{"cub", "", nil, false},
		{"folder", "", nil, false},
	} {
		if got := PixelsInput(dataset.Spec{Kind: tc.kind, Path: "x"}, tc.backbone, tc.mp); got != tc.want {
			t.Errorf("%s backbone %q pipeline %v: %v, want %v", tc.kind, tc.backbone, tc.mp != nil, got, tc.want)
		}
	}
}
