package deploy

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/reject"
)

// TestCalibrationFollowsTheModel: a deployable model calibrates its
// rejection when it learns (New and Load turn it on); the share a user
// chose is kept in the file, even while there is nothing to calibrate on
// (one sample per class: a class's only sample cannot be left out), and a
// reloaded model calibrates its next learn with it.
func TestCalibrationFollowsTheModel(t *testing.T) {
	ctx := context.Background()
	const d = 8
	r := rand.New(rand.NewPCG(7, 8))
	data := func(n int) ([]float32, []string) {
		x := make([]float32, n*d)
		names := make([]string, n)
		for i := range names {
			c := i % 2
			names[i] = []string{"ant", "bee"}[c]
			for j := 0; j < d; j++ {
				x[i*d+j] = float32(r.NormFloat64() * 0.4)
			}
			x[i*d+c] += 3
		}
		return x, names
	}
	m, err := New(flycl.Config{M: 60, P: 4, K: 20, Lambdas: []float64{1}}, d, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Model.SetCalibration(&reject.Calibration{Keep: 0.8}); err != nil {
		t.Fatal(err)
	}
	x, names := data(2) // one of each class
	res, err := m.Learn(ctx, x, names, nil, LearnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rj := res.Rejection; rj.Enabled() || rj.Keep != 0.8 || rj.Samples != 0 || rj.Temperature != 0 {
		t.Fatalf("after one sample of each class: %+v, want off with keep 0.8", rj)
	}
	back, err := roundTrip(m)
	if err != nil {
		t.Fatal(err)
	}
	x, names = data(40)
	res, err = back.Learn(ctx, x, names, nil, LearnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rj := res.Rejection; !rj.Enabled() || rj.Keep != 0.8 || rj.Samples != 40 || !(rj.Temperature > 0) {
		t.Fatalf("after 40 more samples: %+v, want on, keeping 0.8 of 40, and a temperature", rj)
	}
	fresh, err := New(flycl.Config{M: 60, P: 4, K: 20, Lambdas: []float64{1}}, d, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// from the first learn, with 2 samples per class
	x, names = data(4)
	if res, err = fresh.Learn(ctx, x, names, nil, LearnOptions{}); err != nil || res.Rejection.Keep != reject.DefaultKeep || !res.Rejection.Enabled() || res.Rejection.Samples != 4 {
		t.Fatalf("a new model's first learn: %+v, %v", res.Rejection, err)
	}
}
