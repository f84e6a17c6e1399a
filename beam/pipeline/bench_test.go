package pipeline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/projection"
)

// codes returns n top-k codes of dimension m (k = 0.3 m, as Fly-CL's
// 3000 of 10000) from random 768-dimensional features.
func codes(b *testing.B, n, m int) ([]float32, []int) {
	b.Helper()
	const d = 768
	w, err := projection.Generate(m, d, 300, 1)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	h := make([]float32, n*m)
	if err := w.Apply(context.Background(), projection.Sparse, x, n, h); err != nil {
		b.Fatal(err)
	}
	projection.TopK(h, n, m, 3*m/10, projection.Signed)
	labels := make([]int, n)
	for i := range labels {
		labels[i] = i % 10
	}
	return h, labels
}

// BenchmarkAccumulate is a worker's statistics cost per batch of 32
// codes (float64 G += hᵀh, S += hᵀy), the part of the per-image work that
// grows with m². Reported: seconds per sample.
//
//	go test -run XXX -bench Accumulate -benchtime 3x ./pipeline
func BenchmarkAccumulate(b *testing.B) {
	for _, m := range []int{2000, 5000, 10000} {
		b.Run(fmt.Sprintf("m=%d", m), func(b *testing.B) {
			const n = 32
			h, labels := codes(b, n, m)
			acc, err := NewAccumulator(m)
			if err != nil {
				b.Fatal(err)
			}
			ids := make([]uint64, n)
			b.ResetTimer()
			for it := 0; it < b.N; it++ {
				for i := range ids {
					ids[i] = uint64(it*n + i)
				}
				if err := acc.Add(h, labels, ids); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N*n), "s/sample")
		})
	}
}

// BenchmarkFinish is the final step on summed statistics: GCV on the
// statistics (float64) over a 4-value grid and the float32 Cholesky solve,
// the part that grows with m³ and runs on one worker.
//
//	go test -run XXX -bench Finish -benchtime 1x ./pipeline
func BenchmarkFinish(b *testing.B) {
	for _, m := range []int{1000, 2000, 4000} {
		b.Run(fmt.Sprintf("m=%d", m), func(b *testing.B) {
			n := 2 * m
			h, labels := codes(b, n, m)
			acc, err := NewAccumulator(m)
			if err != nil {
				b.Fatal(err)
			}
			ids := make([]uint64, n)
			for i := range ids {
				ids[i] = uint64(i)
			}
			if err := acc.Add(h, labels, ids); err != nil {
				b.Fatal(err)
			}
			cfg := flycl.Config{M: m, P: 300, K: 3 * m / 10, Seed: 1, Lambdas: []float64{1e2, 1e3, 1e4, 1e5}}
			base, err := flycl.New(cfg, 768)
			if err != nil {
				b.Fatal(err)
			}
			sf := &modelfile.StatsFile{Config: modelfile.StatsConfigOf(base), Stats: acc.st, Names: []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"},
				Shards: []modelfile.Shard{{Count: 1, Samples: n}}, IDs: ids}
			b.ResetTimer()
			for it := 0; it < b.N; it++ {
				if _, err := Learn(context.Background(), cfg, sf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
