package pipeline

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/flycl/flycl"
)

// DiffModels compares two models bit for bit: λ, samples, classes, GCV
// scores, G, S, coefficients, and the predictions for the rows of x
// (n×d). It returns "" when they are identical, else the first
// difference.
func DiffModels(ctx context.Context, a, b *flycl.Model, x []float32) (string, error) {
	switch {
	case math.Float64bits(a.Lambda()) != math.Float64bits(b.Lambda()):
		return fmt.Sprintf("λ %g and %g", a.Lambda(), b.Lambda()), nil
	case a.Samples() != b.Samples():
		return fmt.Sprintf("%d and %d samples", a.Samples(), b.Samples()), nil
	case !slices.Equal(a.Classes(), b.Classes()):
		return fmt.Sprintf("classes %v and %v", a.Classes(), b.Classes()), nil
	case a.Config().M != b.Config().M:
		return fmt.Sprintf("m=%d and m=%d", a.Config().M, b.Config().M), nil
	}
	ha, hb := a.History(), b.History()
	if len(ha) != len(hb) {
		return fmt.Sprintf("%d and %d tasks", len(ha), len(hb)), nil
	}
	for t := range ha {
		if i := firstDiff(ha[t].GCV, hb[t].GCV); i >= 0 {
			return fmt.Sprintf("task %d: GCV score %d", t, i), nil
		}
	}
	sa, sb := a.Snapshot(), b.Snapshot()
	for i := range a.Config().M {
		if j := firstDiff(sa.LowerRow(i), sb.LowerRow(i)); j >= 0 {
			return fmt.Sprintf("G[%d][%d]: %v and %v", i, j, sa.LowerRow(i)[j], sb.LowerRow(i)[j]), nil
		}
	}
	if i := firstDiff(sa.S(), sb.S()); i >= 0 {
		return fmt.Sprintf("S[%d]", i), nil
	}
	if i := firstDiff(sa.Coef(), sb.Coef()); i >= 0 {
		return fmt.Sprintf("coefficient %d", i), nil
	}
	pa, err := a.Predict(ctx, x)
	if err != nil {
		return "", err
	}
	pb, err := b.Predict(ctx, x)
	if err != nil {
		return "", err
	}
	for i := range pa {
		if pa[i] != pb[i] {
			return fmt.Sprintf("prediction %d: %d and %d", i, pa[i], pb[i]), nil
		}
	}
	return "", nil
}

// firstDiff returns the first index where a and b differ in bits, or -1.
func firstDiff[F float32 | float64](a, b []F) int {
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	for i := range a {
		if math.Float64bits(float64(a[i])) != math.Float64bits(float64(b[i])) {
			return i
		}
	}
	return -1
}
