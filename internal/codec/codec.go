package codec

import (
	"context"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/modelhook"
	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/reject"
	"github.com/flycl/flycl/ridge"
)

// hooks are package flycl's functions inside a model (flycl.Internal: a
// value holding nothing, typed by modelhook.Hooks).
func hooks() modelhook.Hooks[*flycl.Model, *flycl.Snapshot, *flycl.Predictor, flycl.State] {
	return flycl.Internal(modelhook.Key{})
}

// Restore rebuilds a model from its state, W and statistics, checking
// that they fit together (see flycl.State). The model takes ownership of
// acc. Learning then continues exactly as it would have in the original
// model.
func Restore(st flycl.State, w *projection.Matrix, acc *ridge.Accumulator) (*flycl.Model, error) {
	return hooks().Restore(st, w, acc)
}

// NewSnapshot assembles a snapshot from decoded parts, checking that they
// fit together and mean something (see flycl.State for the checks; G and
// S must be finite, G's diagonal non-negative, the sample count
// non-negative and at least the sum of the known class counts). g is G's
// packed lower triangle (see ridge.Accumulator.PackedLower). The snapshot
// takes ownership of g and s.
func NewSnapshot(st flycl.State, w *projection.Matrix, g, s []float32, samples int) (*flycl.Snapshot, error) {
	return hooks().NewSnapshot(st, w, g, s, samples)
}

// LowerRow returns G[i][0..i] of the snapshot's statistics (shared, or a
// copy for a view: do not modify).
func LowerRow(s *flycl.Snapshot, i int) []float32 { return AppendLowerRow(nil, s, i) }

// AppendLowerRow appends G[i][0..i] of the snapshot's statistics to dst
// and returns it (for encoders that reuse one buffer).
func AppendLowerRow(dst []float32, s *flycl.Snapshot, i int) []float32 {
	return hooks().AppendLowerRow(s, dst, i)
}

// View returns a snapshot of m that shares the model's statistics G and
// S instead of copying them (G alone is m(m+1)/2 float32, 200 MB at
// m = 10000): for saving the model from the goroutine that owns it. The
// view is valid only until the model next changes; use m.Snapshot for
// one that outlives that.
func View(m *flycl.Model) *flycl.Snapshot {
	return hooks().View(m)
}

// CalibrationPool returns the pool of recent leave-one-out open-set
// scores m's rejection threshold was taken from (newest first; see
// flycl.Model.SetCalibration).
func CalibrationPool(m *flycl.Model) []float32 {
	return hooks().CalibrationPool(m)
}

// RestoreCalibration puts back a calibration m had before: the rejection
// r and the pool of leave-one-out scores it was taken from, as
// m.Rejection and CalibrationPool returned them then. An undo calls it
// after Unlearn, with the calibration from before the learn it takes
// back, so that the model rejects and calibrates its probabilities
// exactly as that version did (Unlearn alone keeps the newer ones). It
// is part of that change: it does not count as one (the version stays).
// The leave-one-out scores of the last calibration (LeaveOneOut) are not
// restored: they are forgotten, as by a model loaded from its file.
//
// A rejection that does not validate, or a pool that is longer than
// reject.MaxCalibrationPool or holds a value that is not finite, is
// refused with the model unchanged.
func RestoreCalibration(m *flycl.Model, r reject.Rule, pool []float32) error {
	return hooks().RestoreCalibration(m, r, pool)
}

// LeaveOneOut returns the exact leave-one-out class scores (rows of
// m.Classes() columns) and the class index of each sample, of the
// samples m's last calibration used (nil before any): for a harness that
// calibrates scores of its own on the same samples
// (reject.CalibrationSamples gives their rows in the learn).
func LeaveOneOut(m *flycl.Model) (scores []float32, classes []int) {
	return hooks().LeaveOneOut(m)
}

// SetUpdateLimit sets how many samples learned or forgotten since the
// last factorisation of G + λI m keeps that factor for (adding each
// learn's rank-n term to its low-rank term instead of refactoring): 0
// always refactors, a negative value restores the default,
// ridge.UpdateLimit(m). Benchmarks and tests use it to run both paths;
// the result is the same up to float32 rounding (see
// ridge.DriftTolerance).
func SetUpdateLimit(m *flycl.Model, n int) {
	hooks().SetUpdateLimit(m, n)
}

// State returns a copy of m's state (what m.Snapshot().State() returns,
// without copying G).
func State(m *flycl.Model) flycl.State { return View(m).State() }

// Projection returns m's W (shared: do not modify).
func Projection(m *flycl.Model) *projection.Matrix { return View(m).Projection() }

// Expand maps the n×d features x to their n×m sparse codes top-k(x Wᵀ),
// the codes m learns from and scores (of x times m's input scale, which
// is 1 unless the λ grid is relative: see flycl.LambdaRelative): for the
// research baselines and analyses that work on Fly-CL's codes.
func Expand(ctx context.Context, m *flycl.Model, x []float32) ([]float32, error) {
	return hooks().Expand(m, ctx, x)
}

// BatchPredictor returns m's predictor (as m.Predictor) scoring whole
// test sets by BLAS products (sgemm) instead of row by row: about 5 times
// faster at m = 10000 and 100 classes, and a sample's scores may differ,
// in the last bits, with the other samples of the call. For the research
// harnesses that evaluate test sets (experiments, baselines, open-set
// and analysis), not for serving: a server must answer a sample the same
// alone or in a batch (flycl.Predictor.Scores).
func BatchPredictor(m *flycl.Model) *flycl.Predictor {
	return hooks().BatchPredictor(m)
}

// InputScale returns the power of two m multiplies its inputs by (1
// unless Config.LambdaScale is flycl.LambdaRelative and a task was
// learned): the scale of the codes Expand returns.
func InputScale(m *flycl.Model) float64 {
	return hooks().InputScale(m)
}
