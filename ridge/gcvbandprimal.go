package ridge

import (
	"context"
	"fmt"
	"math"

	"github.com/flycl/flycl/linalg"
)

// gcvBandPrimal is the band method for n >= m: it reduces the task's own
// Gram matrix G = HᵀH (m×m) instead of K = H Hᵀ (n×n), so it needs no
// K at all (n²·m flops saved), and the G it forms is the one the
// statistics update adds (see Workspace.TaskGram): one ssyrk of the codes
// serves both. With G = Q B Qᵀ, S = HᵀY and C = (G + λI)⁻¹ S,
//
//	1 − df/n = (n − m + λ tr (B + λI)⁻¹) / n,
//	‖Y − HC‖²_F = ‖Y‖²_F − tr SᵀC − λ‖C‖²_F,
//
// (GC = S − λC), and both C-terms are inner products of QᵀS with
// (B + λI)⁻¹QᵀS, banded solves in float64. The trace has no cancellation
// for n >= m (every term is positive); the residual is a difference, as
// in the statistics GCV (gcvStats), and gets the same first-order bound
// on the error of its fitted part from the errors of G and S: a λ whose
// residual that bound could decide is given +Inf. λ below the rounding
// noise of the float32 G get +Inf as in gcvBand (bandNoiseFloor).
//
// The strict lower triangle of buf keeps G when it returns (the reduction
// works in the upper one); its diagonal is returned in gdiag.
func gcvBandPrimal(ctx context.Context, buf []float32, gdiag []float32, h []float32, n, m int, labels []int, nc int, grid []float64) ([]float64, error) {
	kd := min(BandWidth, m-1)
	if kd < 1 {
		return nil, fmt.Errorf("ridge: GCV: the band method needs m >= 2, got %d", m)
	}
	linalg.SsyrkLower(true, m, n, 1, h, m, 0, buf, m)
	for i := range gdiag {
		gdiag[i] = buf[i*m+i]
	}
	mirrorLower(buf, m)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// S = HᵀY (rows: classes), summed in float64 and rounded once.
	s64 := classSums[float64](h, m, labels, nc)
	var sNorm float64
	qs := make([]float32, nc*m)
	for i, v := range s64 {
		qs[i] = float32(v)
		sNorm += v * v
	}
	sNorm = math.Sqrt(sNorm)
	f, z, _, err := reduceToBand(buf, m, kd, qs, nc)
	if err != nil {
		return nil, fmt.Errorf("ridge: GCV: %w", err)
	}
	gNorm := f.norm()
	f.withNoiseFloor(grid, bandNoiseFloor*u32*gNorm)
	// Errors of G and S as fractions of their norms: the float32 Gram and
	// its reduction (the noise measured for bandNoiseFloor, ≤ 8·u32), and
	// S rounded to float32 and rotated in float32.
	const relErr = bandNoiseFloor / 2 * u32
	p := newPrimalScorer(f, z, n, m, nc).fromStatistics(float64(n), relErr, gNorm, sNorm) // ‖Y‖²_F = n: one-hot
	return scoreGrid(ctx, grid, n, p)
}

// TaskGram returns the Gram matrix HᵀH of the n×m codes h that the last
// GCV call on w scored, when that call formed it (the band method with
// n >= m does): its strict lower triangle in lower (m×m, row-major; the
// other entries are scratch) and its diagonal in diag. ok is false when
// the last call did not form it or scored other codes. The values stay
// valid until the next call on w; h must not have changed since.
// Accumulator.AddWithGram adds it, so the statistics update does not compute
// it again.
func (w *Workspace) TaskGram(h []float32, n, m int) (lower, diag []float32, ok bool) {
	if w.gramN == 0 || w.gramN != n || w.gramM != m || len(h) != n*m || &h[0] != w.gramOf {
		return nil, nil, false
	}
	return w.buf[:m*m], w.gdiag[:m], true
}
