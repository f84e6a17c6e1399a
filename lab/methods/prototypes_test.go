package methods

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/lab/experiment"
)

// TestPrototypes: the hook keeps the first Fly-CL run's correlations (NCM
// runs first and is passed over), of its class order's first classes,
// and their feature stage is the Pearson correlation of the class means
// of the samples the protocol learns, computed here by brute force.
func TestPrototypes(t *testing.T) {
	const d, classes, per = 6, 4, 8
	r := rand.New(rand.NewPCG(1, 2))
	train := &features.Set{D: d}
	for i := 0; i < classes*per; i++ {
		c := i % classes
		for j := 0; j < d; j++ {
			v := r.NormFloat64()
			if j == c {
				v += 4
			}
			train.X = append(train.X, float32(v))
		}
		train.Labels = append(train.Labels, c)
		train.N++
	}
	cfg := flycl.DefaultConfig()
	cfg.M, cfg.P, cfg.K, cfg.Lambdas = 64, 3, 16, []float64{1e-2, 1, 1e2}
	ms, err := Parse("ncm,flycl", Options{FlyCL: cfg, OnlineBatch: 1000, HebbianPasses: 1})
	if err != nil {
		t.Fatal(err)
	}
	p := experiment.Protocol{Tasks: 2, Seeds: []int64{5, 6}, Order: "flycl", TrainPerClass: 5}
	protos := Prototypes{Train: train, Protocol: p}
	res, err := experiment.Execute(context.Background(), train, train, ms, p, experiment.Hooks{Finished: protos.Finished(context.Background())})
	if err != nil {
		t.Fatal(err)
	}
	var first *experiment.Run
	for i := range res.Runs {
		if res.Runs[i].Method == "Fly-CL" {
			first = &res.Runs[i]
			break
		}
	}
	if first == nil || protos.Stages == nil || protos.Method != "Fly-CL" || protos.Seed != first.Seed {
		t.Fatalf("recorded %q seed %d, want the first Fly-CL run (%+v)", protos.Method, protos.Seed, first)
	}
	if !slices.Equal(protos.Stages.Classes, first.ClassOrder) {
		t.Fatalf("classes %v, want the run's order %v", protos.Stages.Classes, first.ClassOrder)
	}
	// brute force: class means of the first 5 samples of each class
	means := make([][]float64, classes)
	seen := make([]int, classes)
	for i, c := range train.Labels {
		if seen[c] == 5 {
			continue
		}
		seen[c]++
		if means[c] == nil {
			means[c] = make([]float64, d)
		}
		for j := 0; j < d; j++ {
			means[c][j] += float64(train.X[i*d+j]) / 5
		}
	}
	pearson := func(a, b []float64) float64 {
		var ma, mb float64
		for j := range a {
			ma += a[j] / float64(len(a))
			mb += b[j] / float64(len(b))
		}
		var sab, saa, sbb float64
		for j := range a {
			sab += (a[j] - ma) * (b[j] - mb)
			saa += (a[j] - ma) * (a[j] - ma)
			sbb += (b[j] - mb) * (b[j] - mb)
		}
		return sab / math.Sqrt(saa*sbb)
	}
	for i, ci := range protos.Stages.Classes {
		for j, cj := range protos.Stages.Classes {
			want := pearson(means[ci], means[cj])
			// float32 features, 6 dimensions: 1e-5 is far above the
			// rounding of a mean of 5 float32 values
			if got := protos.Stages.Features.At(i, j); math.Abs(got-want) > 1e-5 {
				t.Fatalf("features r(%d,%d) = %g, brute force %g", ci, cj, got, want)
			}
		}
	}
}
