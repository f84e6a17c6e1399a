package modelhook

import (
	"context"

	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/reject"
	"github.com/flycl/flycl/ridge"
)

// Key is the argument of flycl.Internal. Its blank field makes it a type
// that only this module can name or build (a struct literal of the same
// shape written in another package is another type), so only this
// module's packages can call Internal.
type Key struct{ _ struct{} }

// Hooks are the functions inside a flycl model that internal/codec
// reaches, with Model, Snapshot, Predictor and State standing for
// *flycl.Model, *flycl.Snapshot, *flycl.Predictor and flycl.State
// (internal/codec documents each).
type Hooks[Model, Snapshot, Predictor, State any] interface {
	// Restore rebuilds a model from its state, W and statistics.
	Restore(st State, w *projection.Matrix, acc *ridge.Accumulator) (Model, error)
	// NewSnapshot assembles a snapshot from decoded parts.
	NewSnapshot(st State, w *projection.Matrix, g, s []float32, samples int) (Snapshot, error)
	// AppendLowerRow appends G[i][0..i] of s's statistics to dst.
	AppendLowerRow(s Snapshot, dst []float32, i int) []float32
	// View is a snapshot sharing the model's statistics.
	View(m Model) Snapshot
	// CalibrationPool is the pool of leave-one-out scores of the
	// rejection's threshold.
	CalibrationPool(m Model) []float32
	// RestoreCalibration puts back a rejection and its pool.
	RestoreCalibration(m Model, r reject.Rule, pool []float32) error
	// LeaveOneOut are the last calibration's leave-one-out scores.
	LeaveOneOut(m Model) (scores []float32, classes []int)
	// InputScale is the power of two the model multiplies inputs by.
	InputScale(m Model) float64
	// Expand maps features to the model's sparse codes.
	Expand(m Model, ctx context.Context, x []float32) ([]float32, error)
	// BatchPredictor is the model's predictor scoring by sgemm.
	BatchPredictor(m Model) Predictor
	// SetUpdateLimit sets how long the model keeps a factor of G + λI.
	SetUpdateLimit(m Model, n int)
}
