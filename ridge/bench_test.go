package ridge

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/flycl/flycl/internal/proctime"
	"github.com/flycl/flycl/linalg"
)

// BenchmarkGCV compares the exact GCV methods on one task's codes for the
// default 4-value grid and a 17-value grid (why GCVAuto switches to the
// eigendecomposition for long grids, and to the primal form when n > m).
func BenchmarkGCV(b *testing.B) {
	for _, sz := range []struct{ n, m int }{{2000, 4000}, {4000, 2000}} {
		h, labels := classData(1, sz.n, sz.m, 10)
		for _, grid := range [][]float64{
			{1e6, 1e7, 1e8, 1e9},
			{1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8},
		} {
			for _, method := range []GCVMethod{GCVDual, GCVPrimal, GCVEigen, GCVBand} {
				b.Run(fmt.Sprintf("n=%d/m=%d/grid=%d/%v", sz.n, sz.m, len(grid), method), func(b *testing.B) {
					var ws Workspace
					defer reportCPU(b)()
					for b.Loop() {
						if _, err := ws.GCV(context.Background(), h, sz.n, sz.m, labels, 10, grid, method); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkGCVFromStatistics times GCV computed from a Gram matrix alone
// (the statistics path of flycl merge and --gcv-scope all: one float64
// reduction for the whole grid, tridiagonal or band) next to the lead's
// per-λ Cholesky form GCVGram, on the same statistics, for a 4- and a
// 12-value grid. FLYCL_BENCH_M=10000 gives the paper's m (1.6 GB of
// float64 G; minutes per iteration).
func BenchmarkGCVFromStatistics(b *testing.B) {
	ms := []int{1000, 2000}
	if v, err := strconv.Atoi(os.Getenv("FLYCL_BENCH_M")); err == nil && v > 0 {
		ms = []int{v}
	}
	for _, m := range ms {
		n := m / 2
		h, labels := classData(1, n, m, 10)
		st, _ := NewStats(m)
		if err := st.Add(h, n, labels); err != nil {
			b.Fatal(err)
		}
		for _, grid := range [][]float64{
			{1e2, 1e3, 1e4, 1e5},
			{1e-2, 1e-1, 1, 10, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9},
		} {
			b.Run(fmt.Sprintf("m=%d/n=%d/grid=%d/tridiagonal", m, n, len(grid)), func(b *testing.B) {
				for b.Loop() {
					if _, err := st.gcv(context.Background(), grid, math.MaxInt); err != nil {
						b.Fatal(err)
					}
				}
			})
			if linalg.HaveBandReduction {
				b.Run(fmt.Sprintf("m=%d/n=%d/grid=%d/band", m, n, len(grid)), func(b *testing.B) {
					for b.Loop() {
						if _, err := st.gcv(context.Background(), grid, 0); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
			b.Run(fmt.Sprintf("m=%d/n=%d/grid=%d/cholesky", m, n, len(grid)), func(b *testing.B) {
				g := make([]float64, m*m)
				for b.Loop() {
					for i := 0; i < m; i++ {
						for j, v := range st.G[i*(i+1)/2 : i*(i+1)/2+i+1] {
							g[i*m+j] = v
						}
					}
					if _, err := GCVGram(context.Background(), g, m, st.S, len(st.Labels), float64(n), n, grid); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkOverlapGramK measures the overlap question of issue 17 for
// n < m, where the statistics update (G += HᵀH, ssyrk of m×m) and the
// dual/band GCV (K = H Hᵀ, ssyrk of n×n) read the same codes but form
// different products: one after the other, or both at once from two
// goroutines (each ssyrk is itself multi-threaded by OpenBLAS). Run with
// OPENBLAS_NUM_THREADS=1 too, where the two goroutines are the only
// parallelism. Sizes are the CIFAR-100 scale halved (n = 2500, m = 5000:
// 1/8 of its flops).
func BenchmarkOverlapGramK(b *testing.B) {
	const n, m = 2500, 5000
	h, _ := classData(1, n, m, 10)
	g := make([]float32, m*m)
	k := make([]float32, n*n)
	gram := func() { linalg.SsyrkLower(true, m, n, 1, h, m, 0, g, m) }
	dualK := func() { linalg.SsyrkLower(false, n, m, 1, h, m, 0, k, n) }
	b.Run("sequential", func(b *testing.B) {
		defer reportCPU(b)()
		for b.Loop() {
			gram()
			dualK()
		}
	})
	b.Run("concurrent", func(b *testing.B) {
		defer reportCPU(b)()
		for b.Loop() {
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); gram() }()
			go func() { defer wg.Done(); dualK() }()
			wg.Wait()
		}
	})
}

// BenchmarkGCVBandSquare compares, for one task with n = m (the CIFAR-10
// scale shrunk to n = m = 3000, 6 grid values), the band GCV on K = H Hᵀ
// followed by the statistics update's own ssyrk, with the band GCV on the
// task's Gram HᵀH whose G the update then adds (one pass over the codes):
// the first forms two n·m² products, the second one.
func BenchmarkGCVBandSquare(b *testing.B) {
	const n, m, nc = 3000, 3000, 2
	h, labels := classData(1, n, m, nc)
	grid := []float64{1e4, 1e5, 1e6, 1e7, 1e8, 1e9}
	ctx := context.Background()
	acc, _ := NewAccumulator(m)
	b.Run("K+update", func(b *testing.B) {
		buf := make([]float32, n*n)
		defer reportCPU(b)()
		for b.Loop() {
			if _, err := gcvBand(ctx, buf, h, n, m, labels, nc, grid); err != nil {
				b.Fatal(err)
			}
			AddGram(acc.buf, acc.diag, h, n, m)
		}
	})
	b.Run("Gt-shared", func(b *testing.B) {
		var ws Workspace
		defer reportCPU(b)()
		for b.Loop() {
			if _, err := ws.GCV(ctx, h, n, m, labels, nc, grid, GCVBand); err != nil {
				b.Fatal(err)
			}
			lower, diag, ok := ws.TaskGram(h, n, m)
			if !ok {
				b.Fatal("no task Gram")
			}
			if err := acc.AddWithGram(h, n, labels, lower, diag); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// reportCPU makes the benchmark report CPU seconds per op (see cpuTime);
// use as defer reportCPU(b)().
func reportCPU(b *testing.B) func() {
	start := proctime.CPU()
	return func() {
		if b.N > 0 {
			b.ReportMetric((proctime.CPU()-start).Seconds()/float64(b.N), "cpu-s/op")
		}
	}
}
