package flycl

import (
	"math"

	"github.com/flycl/flycl/ridge"
)

// LambdaIssue says why a λ chosen by GCV should not be trusted; the empty
// issue means none was found.
type LambdaIssue string

// The issues LambdaCheck finds, most severe first.
const (
	// LambdaNotFinite: a GCV score is NaN (or −Inf), or every score is
	// +Inf, typically because the statistics overflowed (features of a
	// huge scale). A +Inf score alone is no issue: the GCV routines give
	// +Inf on purpose to a λ for which G + λI cannot be factored.
	LambdaNotFinite LambdaIssue = "not-finite"
	// LambdaFlat: GCV is the same for every grid value (relative spread
	// below FlatGCV): λ has no measurable effect, so the grid is far from
	// the scale of the data and the choice is noise.
	LambdaFlat LambdaIssue = "flat"
	// LambdaLowEdge: the smallest grid value was chosen; the optimum may
	// lie below the grid.
	LambdaLowEdge LambdaIssue = "low-edge"
	// LambdaHighEdge: the largest grid value was chosen; the optimum may
	// lie above the grid.
	LambdaHighEdge LambdaIssue = "high-edge"
)

// FlatGCV is the relative spread (max−min)/max of the GCV scores below
// which LambdaCheck calls the curve flat. GCV is computed in float32 with
// float64 sums; its rounding noise is about 1e-7 of the score, while a grid
// spanning decades around the useful λ moves the score by percents. 1e-4
// sits between the two with three orders of magnitude on either side.
const FlatGCV = 1e-4

// LambdaCheck diagnoses a GCV choice: grid holds the λ values scored,
// scores their GCV values and chosen the λ picked. A grid of fewer than
// two values (or no scores: λ was fixed) has no issue. +Inf scores (λ
// that could not be factored) are left out of the flat check; the edges
// are those of the whole grid.
func LambdaCheck(grid, scores []float64, chosen float64) LambdaIssue {
	if len(grid) < 2 || len(scores) != len(grid) {
		return ""
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	finite := 0
	for _, s := range scores {
		if math.IsNaN(s) || math.IsInf(s, -1) {
			return LambdaNotFinite
		}
		if math.IsInf(s, 1) {
			continue // "this λ cannot be factored" (see ridge.BestLambda)
		}
		finite++
		lo, hi = min(lo, s), max(hi, s)
	}
	if finite == 0 {
		return LambdaNotFinite
	}
	if finite >= 2 && hi-lo <= FlatGCV*math.Abs(hi) {
		return LambdaFlat
	}
	gmin, gmax := grid[0], grid[0]
	for _, g := range grid {
		gmin, gmax = min(gmin, g), max(gmax, g)
	}
	switch chosen {
	case gmin:
		return LambdaLowEdge
	case gmax:
		return LambdaHighEdge
	}
	return ""
}

// LambdaIssue diagnoses the record's GCV choice (see LambdaCheck). The λ
// compared with the grid is the one GCV chose, before any raise needed by
// the factorisation.
//
// A continuous choice (the dual form's minimum over every λ > 0) has no
// grid edges: at an end of its range the choice is a limit of the curve
// (r.Limit), not a bound of a grid, and is no issue.
func (r TaskRecord) LambdaIssue() LambdaIssue {
	if r.Continuous {
		if i := LambdaCheck(r.Grid, r.GCV, math.NaN()); i == LambdaNotFinite || i == LambdaFlat {
			return i
		}
		return ""
	}
	chosen := r.Lambda
	if r.RaisedFrom != 0 {
		chosen = r.RaisedFrom
	}
	return LambdaCheck(r.Grid, r.GCV, chosen)
}

// TaskRecord describes one learning step (a task, or a batch online).
type TaskRecord struct {
	Samples    int       // samples in the step
	NewClasses []int     // labels first seen in the step
	Lambda     float64   // ridge parameter used for the solve
	RaisedFrom float64   // λ chosen by GCV when the solve had to raise it (else 0)
	GCV        []float64 // GCV score per grid value (nil if λ was fixed)
	Grid       []float64 // the λ values GCV scored, in Config.Lambdas order, widened values (Config.WidenGrid) before and after (nil if λ was fixed)
	GCVScope   GCVScope  // the samples GCV scored λ on (when GCV ran)
	Stages     Stages
	Removed    []int // labels forgotten in this step (Forget); no samples learned
	Classes    []int // labels of the samples learned in the step, ascending (nil in old model files)
	// FactorUpdated says that the step kept the Cholesky factor of
	// G + λI, adding its rank-n term (or, for Forget, subtracting it)
	// instead of factoring afresh (not kept in model files).
	FactorUpdated bool
	// Continuous says that λ minimises GCV over every λ > 0 (the dual
	// form with Config.WidenGrid; Grid and GCV are then its scan), and
	// Limit where in its range it fell (not kept in model files: the
	// model's State.LambdaLimit keeps the last).
	Continuous bool
	Limit      ridge.Limit
}
