package pipeline

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/codec"
)

// DiffModels compares two models bit for bit: λ, samples, classes, GCV
// scores, G, S, coefficients, and the predictions for the rows of x
// (n×d). It returns nil when they are identical, else one line per part
// that differs (its first difference).
func DiffModels(ctx context.Context, a, b *flycl.Model, x []float32) ([]string, error) {
	var diffs []string
	if math.Float64bits(a.Lambda()) != math.Float64bits(b.Lambda()) {
		diffs = append(diffs, fmt.Sprintf("λ %g and %g", a.Lambda(), b.Lambda()))
	}
	if a.Samples() != b.Samples() || !slices.Equal(a.Classes().Labels(), b.Classes().Labels()) || a.Config().M != b.Config().M {
		return append(diffs, fmt.Sprintf("%d samples of classes %v (m=%d) and %d of %v (m=%d)",
			a.Samples(), a.Classes().Labels(), a.Config().M, b.Samples(), b.Classes().Labels(), b.Config().M)), nil
	}
	ha, hb := a.History(), b.History()
	if len(ha) != len(hb) {
		return append(diffs, fmt.Sprintf("%d and %d tasks", len(ha), len(hb))), nil
	}
	for t := range ha {
		if i := firstDiff(ha[t].GCV, hb[t].GCV); i >= 0 && i < min(len(ha[t].GCV), len(hb[t].GCV)) {
			diffs = append(diffs, fmt.Sprintf("task %d: GCV score %d: %.17g and %.17g", t, i, ha[t].GCV[i], hb[t].GCV[i]))
		}
	}
	sa, sb := a.Snapshot(), b.Snapshot()
	for i := range a.Config().M {
		if j := firstDiff(codec.LowerRow(sa, i), codec.LowerRow(sb, i)); j >= 0 {
			diffs = append(diffs, fmt.Sprintf("G[%d][%d]: %v and %v", i, j, codec.LowerRow(sa, i)[j], codec.LowerRow(sb, i)[j]))
			break
		}
	}
	if i := firstDiff(sa.S(), sb.S()); i >= 0 {
		diffs = append(diffs, fmt.Sprintf("S[%d]", i))
	}
	if i := firstDiff(sa.Coef(), sb.Coef()); i >= 0 {
		diffs = append(diffs, fmt.Sprintf("coefficient %d", i))
	}
	pa, err := a.Predictor().Predict(ctx, x)
	if err != nil {
		return nil, err
	}
	pb, err := b.Predictor().Predict(ctx, x)
	if err != nil {
		return nil, err
	}
	for i := range pa {
		if pa[i] != pb[i] {
			diffs = append(diffs, fmt.Sprintf("prediction %d: %d and %d", i, pa[i], pb[i]))
			break
		}
	}
	return diffs, nil
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
