package statcmp

import (
	"fmt"
	"math"
	"slices"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/codec"
)

// Close returns an error naming the first entry where a and b differ by
// more than float32 rounding: |G_ij − G'_ij| > tol·√(A_ii·A_jj) or
// |S_ic − S'_ic| > tol·√(A_ii·n), A the Gram of every row the models ever
// learned (all's G) and n its rows; or where their classes or sample
// counts differ. tol is u times the number of roundings a partial sum
// went through (2⁻²⁴ for each row added or subtracted).
func Close(a, b, all *flycl.Model, tol float64) error {
	if !slices.Equal(a.Classes().Names(), b.Classes().Names()) || a.Samples() != b.Samples() {
		return fmt.Errorf("classes %v and %d samples against %v and %d", a.Classes().Names(), a.Samples(), b.Classes().Names(), b.Samples())
	}
	sa, sb, sall := a.Snapshot(), b.Snapshot(), all.Snapshot()
	m := a.Config().M
	diag := make([]float64, m)
	for i := range m {
		diag[i] = float64(codec.LowerRow(sall, i)[i])
	}
	for i := range m {
		ra, rb := codec.LowerRow(sa, i), codec.LowerRow(sb, i)
		for j := range ra {
			if d := math.Abs(float64(ra[j]) - float64(rb[j])); d > tol*math.Sqrt(diag[i]*diag[j]) {
				return fmt.Errorf("G[%d][%d] = %g against %g (tolerance %.3g)", i, j, ra[j], rb[j], tol*math.Sqrt(diag[i]*diag[j]))
			}
		}
	}
	Sa, Sb := sa.S(), sb.S()
	if len(Sa) != len(Sb) {
		return fmt.Errorf("S of %d values against %d", len(Sa), len(Sb))
	}
	n := float64(all.Samples())
	for k := range Sa {
		i := k % m
		if d := math.Abs(float64(Sa[k]) - float64(Sb[k])); d > tol*math.Sqrt(diag[i]*n) {
			return fmt.Errorf("S[%d] = %g against %g (tolerance %.3g)", k, Sa[k], Sb[k], tol*math.Sqrt(diag[i]*n))
		}
	}
	return nil
}
