package modelfile

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/codec"
)

// A model with a relative λ grid keeps its grid scale and input scale in
// the file: loaded and taught another task, it gives the same classifier
// as the model that was never saved.
func TestRelativeLambdaScaleRoundTrip(t *testing.T) {
	const d = 8
	r := rand.New(rand.NewPCG(4, 4))
	data := func(labels ...int) ([]float32, []int) {
		var x []float32
		var y []int
		for _, l := range labels {
			for i := 0; i < 20; i++ {
				for j := 0; j < d; j++ {
					x = append(x, float32(1e12*(float64(l*(j%3))+r.NormFloat64())))
				}
				y = append(y, l)
			}
		}
		return x, y
	}
	ctx := context.Background()
	m, err := flycl.New(flycl.Config{M: 200, P: 4, K: 40, LambdaScale: flycl.LambdaRelative}, d)
	if err != nil {
		t.Fatal(err)
	}
	x1, y1 := data(0, 1)
	x2, y2 := data(2, 3)
	if _, err := m.Learn(ctx, x1, y1, nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.flycl")
	if err := SaveModel(path, m); err != nil {
		t.Fatal(err)
	}
	back, err := LoadModel(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Config().LambdaScale != flycl.LambdaRelative || codec.InputScale(back) != codec.InputScale(m) || codec.InputScale(m) == 1 {
		t.Fatalf("loaded: scale %v, input scale %g (saved %g)", back.Config().LambdaScale, codec.InputScale(back), codec.InputScale(m))
	}
	ra, err := m.Learn(ctx, x2, y2, nil)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := back.Learn(ctx, x2, y2, nil)
	if err != nil {
		t.Fatal(err)
	}
	sa, _ := m.Predictor().Scores(ctx, x2)
	sb, _ := back.Predictor().Scores(ctx, x2)
	if ra.Lambda != rb.Lambda || !slices.Equal(sa, sb) {
		t.Errorf("after loading: λ %g vs %g, scores equal %v", ra.Lambda, rb.Lambda, slices.Equal(sa, sb))
	}
}
