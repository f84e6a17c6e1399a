package deploy

import (
	"math"
	"testing"
)

// TestLearnOptionsCheck: the rules a learn request's options follow (the
// server's, flycl learn's): λ not negative, finite, within float32; a
// batch only online, positive; online without one gets the default.
func TestLearnOptionsCheck(t *testing.T) {
	for _, tc := range []struct {
		in, want LearnOptions
		ok       bool
	}{
		{LearnOptions{}, LearnOptions{}, true},
		{LearnOptions{Lambda: 2}, LearnOptions{Lambda: 2}, true},
		{LearnOptions{Online: true}, LearnOptions{Online: true, Batch: DefaultOnlineBatch}, true},
		{LearnOptions{Online: true, Batch: 7}, LearnOptions{Online: true, Batch: 7}, true},
		{LearnOptions{Lambda: math.MaxFloat32}, LearnOptions{Lambda: math.MaxFloat32}, true},
		{in: LearnOptions{Lambda: -1}},
		{in: LearnOptions{Lambda: math.NaN()}},
		{in: LearnOptions{Lambda: math.Inf(1)}},
		{in: LearnOptions{Lambda: 2 * math.MaxFloat32}},
		{in: LearnOptions{Online: true, Batch: -1}},
		{in: LearnOptions{Batch: 5}},
	} {
		got, err := tc.in.Check()
		if (err == nil) != tc.ok || tc.ok && got != tc.want {
			t.Errorf("Check(%+v) = %+v, %v; want %+v (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
