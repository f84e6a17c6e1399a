package ridge

import (
	"context"
	"fmt"
	"math"

	"github.com/flycl/flycl/linalg"
)

// GCVGram returns, for each λ in grid, the GCV score of ridge regression
// computed from a task's second-order statistics alone, in float64:
//
//	g   = HᵀH (m×m, row-major; only the lower triangle and the diagonal
//	      are read, the strict upper triangle is overwritten as scratch)
//	z   = YᵀH (nc×m, row-major: row c is the sum of the rows of H of class c)
//	yty = ‖Y‖²_F
//	n   = number of samples
//
// With C = (G + λI)⁻¹ HᵀY, the residual is
//
//	‖Y − HC‖²_F = ‖Y‖²_F − tr(Cᵀ HᵀY) − λ‖C‖²_F
//
// (using G C = HᵀY − λC), and 1 − df/n = (n − m + λ tr (G + λI)⁻¹)/n with
// tr (G + λI)⁻¹ = ‖U⁻¹‖²_F for the Cholesky factor U.
//
// Both expressions subtract: when n < m, λ tr (G + λI)⁻¹ contains m − n
// for the null space of G, which the n − m term cancels, and the residual
// of a near-interpolating fit is a small difference of large numbers. In
// float32 this lost three digits (issue 11: GCV off by 2e-3 relative on a
// 60×150 task with OpenBLAS's SkylakeX kernels); in float64 the cancelled
// part costs at most about (m/(n−df)) · κ(G + λI) · 1e-16, which is below
// 1e-9 for every problem flycl solves (κ ≤ 1e6 after λ is added, m ≤ 1e5).
// That is why this path is float64 throughout, and why G must be summed in
// float64 too (a float32 G moves the zero eigenvalues by about 1e-7‖G‖,
// which the cancellation then amplifies). The statistics are taken as
// exact; a λ whose residual is not above the rounding of the float64 sums
// that form it, 8·m·2⁻⁵³·(‖Y‖²_F + tr SᵀC + λ‖C‖²_F), is not determinable
// and scores +Inf.
func GCVGram(ctx context.Context, g []float64, m int, z []float64, nc int, yty float64, n int, grid []float64) ([]float64, error) {
	switch {
	case n <= 0:
		return nil, fmt.Errorf("ridge: GCV of an empty task")
	case m <= 0 || len(g) != m*m:
		return nil, fmt.Errorf("ridge: GCV: Gram has %d values, want %d×%d", len(g), m, m)
	case nc <= 0 || len(z) != nc*m:
		return nil, fmt.Errorf("ridge: GCV: YᵀH has %d values, want %d×%d", len(z), nc, m)
	case !(yty >= 0) || math.IsInf(yty, 0):
		return nil, fmt.Errorf("ridge: GCV: ‖Y‖² = %g is not a non-negative finite number", yty)
	}
	if err := checkGrid(grid); err != nil {
		return nil, err
	}
	f := newDense(g, m)
	defer f.restoreDiagonal() // leave the diagonal as found
	p := newPrimalScorer(f, z, n, m, nc).fromStatistics(yty, 0, 0, 0)
	return scoreGrid(ctx, grid, n, p)
}

// gcvPrimal64 is GCVPrimal for tasks with fewer samples than dimensions,
// where the float32 form cancels (see GCVGram): the statistics are formed
// exactly in float64 from the float32 codes and handed to GCVGram.
func gcvPrimal64(ctx context.Context, h []float32, n, m int, labels []int, nc int, grid []float64) ([]float64, error) {
	h64 := make([]float64, n*m)
	for i, v := range h {
		h64[i] = float64(v)
	}
	g := make([]float64, m*m)
	linalg.Dsyrk(true, m, n, 1, h64, m, 0, g, m) // upper triangle of HᵀH
	// GCVGram reads the lower triangle: transpose the upper one into it.
	for i := 0; i < m; i++ {
		for j := 0; j < i; j++ {
			g[i*m+j] = g[j*m+i]
		}
	}
	z := classSums[float64](h, m, labels, nc)
	return GCVGram(ctx, g, m, z, nc, float64(n), n, grid)
}
