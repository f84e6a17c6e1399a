package ridge

import (
	"context"
	"fmt"
	"testing"
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
// tridiagonal reduction for the whole grid) next to the lead's per-λ
// Cholesky form GCVGram, on the same statistics, for a 4- and a 12-value
// grid.
func BenchmarkGCVFromStatistics(b *testing.B) {
	for _, m := range []int{1000, 2000} {
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
					if _, err := st.GCV(context.Background(), grid); err != nil {
						b.Fatal(err)
					}
				}
			})
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
