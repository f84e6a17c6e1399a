package projection

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/flycl/flycl/internal/proctime"
)

func randCodes(n, m int) []float32 {
	r := rand.New(rand.NewPCG(1, 1))
	h := make([]float32, n*m)
	for i := range h {
		h[i] = float32(r.NormFloat64() * 20)
	}
	return h
}

// BenchmarkTopK: 1000 samples × m=10000, k=3000 (the paper's sizes).
func BenchmarkTopK(b *testing.B) {
	const n, m, k = 1000, 10000, 3000
	src := randCodes(n, m)
	h := make([]float32, len(src))
	for _, mode := range []TopKMode{Signed, Magnitude} {
		b.Run(mode.String(), func(b *testing.B) {
			for b.Loop() {
				copy(h, src)
				TopK(h, n, m, k, mode)
			}
		})
	}
}

// BenchmarkApply compares the dense sgemm with the sparse gather for
// 1000 samples, m=10000, at several fill ratios p/d. Auto picks Dense
// above DenseThreshold.
func BenchmarkApply(b *testing.B) {
	const n, m = 1000, 10000
	for _, c := range []struct{ d, p int }{{768, 300}, {768, 77}, {2048, 300}, {2048, 41}, {4096, 20}} {
		w, _ := Generate(m, c.d, c.p, 1)
		x := randCodes(n, c.d)
		h := make([]float32, n*m)
		for _, method := range []Method{Dense, Sparse} {
			b.Run(fmt.Sprintf("d=%d/p=%d/%v", c.d, c.p, method), func(b *testing.B) {
				w.Dense()
				for b.Loop() {
					if err := w.Apply(context.Background(), method, x, n, h); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkGenerate: W of a new model from photos, m = 10000 at
// MobileNetV2's d = 1280: p = 300 (the paper's), and p = 500 (flycl
// learn's image default at d = 1280). cpu-ms/op is the process's CPU
// time per generation (its rows are split over all CPUs), the figure to
// compare on a loaded machine.
func BenchmarkGenerate(b *testing.B) {
	for _, p := range []int{300, 500} {
		b.Run(fmt.Sprintf("m=10000/d=1280/p=%d", p), func(b *testing.B) {
			c0 := proctime.CPU()
			for b.Loop() {
				if _, err := Generate(10000, 1280, p, 1); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((proctime.CPU()-c0).Microseconds())/float64(b.N)/1e3, "cpu-ms/op")
		})
	}
}
