package deploy

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/flycl/flycl"
)

// TestLearnLambdaPolicy: with flycl.LambdaKeep the first learn runs GCV and
// every later learn keeps its λ without GCV (and, being small, updates the
// factor instead of refactoring); with the default policy every learn runs
// GCV on its own samples.
func TestLearnLambdaPolicy(t *testing.T) {
	const d = 8
	cfg := flycl.Config{M: 400, P: 4, K: 120, Lambdas: []float64{0.01, 1, 100, 1e4}}
	r := rand.New(rand.NewPCG(1, 2))
	batch := func(names ...string) ([]float32, []string) {
		var x []float32
		var out []string
		for _, n := range names {
			for i := 0; i < 6; i++ {
				for j := 0; j < d; j++ {
					x = append(x, float32(len(n)+j%3)+float32(r.NormFloat64()))
				}
				out = append(out, n)
			}
		}
		return x, out
	}
	for _, pol := range []flycl.LambdaPolicy{flycl.LambdaGCV, flycl.LambdaKeep} {
		m, err := New(cfg, d, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var first float64
		for i, names := range [][]string{{"a", "bb"}, {"ccc"}, {"a", "dddd"}} {
			x, y := batch(names...)
			res, err := m.Learn(context.Background(), x, y, nil, LearnOptions{LambdaPolicy: pol})
			if err != nil {
				t.Fatal(err)
			}
			rec := res.Steps[0]
			ranGCV := rec.GCV != nil
			if i == 0 {
				first = rec.Lambda
			}
			switch {
			case pol == flycl.LambdaGCV && !ranGCV, pol == flycl.LambdaKeep && ranGCV != (i == 0):
				t.Errorf("%v, learn %d: GCV ran %v", pol, i, ranGCV)
			case pol == flycl.LambdaKeep && i > 0 && (rec.Lambda != first || !rec.FactorUpdated):
				t.Errorf("keep, learn %d: λ %g (first %g), factor updated %v", i, rec.Lambda, first, rec.FactorUpdated)
			}
		}
	}
}
