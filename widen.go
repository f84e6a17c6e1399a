package flycl

import (
	"context"
	"math"
	"slices"

	"github.com/flycl/flycl/ridge"
)

// MaxWiden is the most decades widenLambdas scores beyond either edge of
// the grid it is given: with the relative grid (10⁻² to 10⁴ times the mean
// diagonal of G) λ then spans 10⁻⁸ to 10¹⁰ of it, from no regularisation
// at all in float32 to a classifier shrunk to nothing.
const MaxWiden = 6

// WidenStep is how many decades widenLambdas scores at a time.
const WidenStep = 2

// widenLambdas widens a GCV grid while its optimum is at an edge: when
// the best score (ridge.BestLambda) is at the smallest λ of grid, it scores
// WidenStep more decades below it (at the largest, above it) with score,
// and again while the best stays at the edge, up to MaxWiden decades on
// each side. It stops when the optimum is inside, when the scores are flat
// or not finite (LambdaCheck: widening cannot help there), or at the bound.
// It returns the grid and scores with the added values, the smaller ones
// before grid's (in ascending order) and the larger after it; grid and
// scores themselves when nothing was added.
func widenLambdas(ctx context.Context, grid, scores []float64, score func(context.Context, []float64) ([]float64, error)) ([]float64, []float64, error) {
	if len(grid) == 0 || len(scores) != len(grid) {
		return grid, scores, nil
	}
	lo, hi := slices.Min(grid), slices.Max(grid)
	below, above := 0, 0 // decades added on each side
	for {
		var add []float64
		low := false
		switch LambdaCheck(grid, scores, grid[ridge.BestLambda(scores)]) {
		case LambdaLowEdge:
			for i := 0; i < WidenStep && below < MaxWiden; i++ {
				below++
				add = append([]float64{lo * math.Pow10(-below)}, add...)
			}
			low = true
		case LambdaHighEdge:
			for i := 0; i < WidenStep && above < MaxWiden; i++ {
				above++
				add = append(add, hi*math.Pow10(above))
			}
		}
		if len(add) == 0 {
			return grid, scores, nil
		}
		sc, err := score(ctx, add)
		if err != nil {
			return nil, nil, err
		}
		if low {
			grid, scores = slices.Concat(add, grid), slices.Concat(sc, scores)
		} else {
			grid, scores = slices.Concat(grid, add), slices.Concat(scores, sc)
		}
	}
}

// PlateauGCV is the relative difference of GCV scores below which
// widenedBest counts them as one plateau: ten times the rounding of
// float32 GCV scores with float64 sums (about 1e-6 of the score) over the
// 10⁴ spread of a few decades of the curve, and far below the percents by
// which λ moves the score where it matters.
const PlateauGCV = 1e-3

// widenedBest returns the index of the λ chosen from a grid widenLambdas
// widened: ridge.BestLambda's, unless that is at an edge of the grid (no
// interior minimum within MaxWiden decades). GCV then has a limit beyond
// the edge (as λ → 0 with fewer samples than m it tends to
// n‖K⁻¹Y‖²/(tr K⁻¹)², K = HHᵀ; as λ → ∞ to ‖Y‖²/n): when the scores have
// levelled off at the edge, widenedBest takes, of the values within
// PlateauGCV of the best, the one furthest from the edge: the same GCV
// up to that tolerance, with the most regularisation (low edge) or the
// least (high edge). When they have not (the value next to the edge is
// worse by more), the edge stays the choice and LambdaCheck reports it.
func widenedBest(grid, scores []float64) int {
	best := ridge.BestLambda(scores)
	issue := LambdaCheck(grid, scores, grid[best])
	if issue != LambdaLowEdge && issue != LambdaHighEdge {
		return best
	}
	order := make([]int, len(grid)) // indices by λ, from the edge inwards
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if issue == LambdaHighEdge {
			a, b = b, a
		}
		switch {
		case grid[a] < grid[b]:
			return -1
		case grid[a] > grid[b]:
			return 1
		}
		return 0
	})
	bound := scores[best] * (1 + PlateauGCV)
	choice := best
	for _, i := range order {
		if !(scores[i] <= bound) {
			break
		}
		choice = i
	}
	return choice
}
