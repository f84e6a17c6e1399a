package flycl

import (
	"fmt"
	"math"
)

// GramLimit bounds every diagonal entry of the float32 Gram matrix G a
// model accepts: a quarter of the largest float32 (3.4e38). Off-diagonal
// entries are bounded by the diagonal (|G_ij| ≤ √(G_ii·G_jj), Cauchy–Schwarz),
// and so are the sums the Cholesky factorisation of G + λI forms, so with
// this margin (for float32 rounding of the sums and for λ) the statistics
// and the factor stay finite. Features whose codes would take G past it
// (features of magnitude about 1e19 and more) are refused.
const GramLimit = math.MaxFloat32 / 4

// errTooLarge is the error for features whose statistics float32 cannot
// hold.
func errTooLarge(what string) error {
	return fmt.Errorf("%w (%s): scale the features down, or use --lambda-scale relative (LambdaRelative), which scales the inputs by a power of two", ErrTooLarge, what)
}

// checkCodes checks that the n×m codes h are finite and that adding them
// keeps every diagonal entry of G within GramLimit.
func (m *Model) checkCodes(h []float32, n int) error {
	if i := firstNonFinite(h); i >= 0 {
		return errTooLarge(fmt.Sprintf("sample %d: code %d is %v", i/m.cfg.M, i%m.cfg.M, h[i]))
	}
	mm := m.cfg.M
	diag := make([]float64, mm)
	g := m.gramDiag()
	for j := range diag {
		diag[j] = g(j)
	}
	for i := 0; i < n; i++ {
		for j, v := range h[i*mm : (i+1)*mm] {
			diag[j] += float64(v) * float64(v)
		}
	}
	for j, v := range diag {
		if v > GramLimit {
			return errTooLarge(fmt.Sprintf("G[%d][%d] would reach %.3g, more than %.3g", j, j, v, GramLimit))
		}
	}
	return nil
}
