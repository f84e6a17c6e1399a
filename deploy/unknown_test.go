package deploy

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/flycl/flycl"
)

// TestCalibrationFollowsTheModel: a deployable model calibrates its
// rejection when it learns (New and Load turn it on); the share a user
// chose is kept in the file, even while the pool is still too small for a
// threshold, and a reloaded model calibrates its next learn with it.
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
	if err := m.SetCalibration(&flycl.UnknownCalibration{Keep: 0.8}); err != nil {
		t.Fatal(err)
	}
	x, names := data(6) // fewer than the 20 a threshold needs
	res, err := m.Learn(ctx, x, names, nil, LearnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rj := res.Rejection; rj.Enabled() || rj.Keep != 0.8 || rj.Samples != 6 || !(rj.Temperature > 0) {
		t.Fatalf("after 6 samples: %+v, want off with keep 0.8 and a temperature", rj)
	}
	path := filepath.Join(t.TempDir(), "m.flycl")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	x, names = data(40)
	res, err = back.Learn(ctx, x, names, nil, LearnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rj := res.Rejection; !rj.Enabled() || rj.Keep != 0.8 || rj.Samples != 46 {
		t.Fatalf("after 46 samples: %+v, want on, keeping 0.8 of 46", rj)
	}
	fresh, err := New(flycl.Config{M: 60, P: 4, K: 20, Lambdas: []float64{1}}, d, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err = fresh.Learn(ctx, x, names, nil, LearnOptions{}); err != nil || res.Rejection.Keep != flycl.DefaultKeep || !res.Rejection.Enabled() {
		t.Fatalf("a new model's first learn: %+v, %v", res.Rejection, err)
	}
}
