package flycl

import (
	"context"

	"github.com/flycl/flycl/internal/modelhook"
	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/reject"
	"github.com/flycl/flycl/ridge"
)

// Internal returns the functions inside a model that the module's own
// model-file codec (internal/codec) reaches it through. They are not part
// of this package's API: the argument's type is internal to this module,
// so no other module can call Internal.
func Internal(modelhook.Key) modelhook.Hooks[*Model, *Snapshot, *Predictor, State] {
	return hooks{}
}

// hooks implements modelhook.Hooks with this package's functions; it
// holds nothing.
type hooks struct{}

func (hooks) Restore(st State, w *projection.Matrix, acc *ridge.Accumulator) (*Model, error) {
	return restoreModel(st, w, acc)
}

func (hooks) NewSnapshot(st State, w *projection.Matrix, g, s []float32, samples int) (*Snapshot, error) {
	return newSnapshot(st, w, g, s, samples)
}

func (hooks) AppendLowerRow(s *Snapshot, dst []float32, i int) []float32 {
	return s.appendLowerRow(dst, i)
}

func (hooks) View(m *Model) *Snapshot                 { return m.snapshotView() }
func (hooks) CalibrationPool(m *Model) []float32      { return m.calibrationPool() }
func (hooks) LeaveOneOut(m *Model) ([]float32, []int) { return m.leaveOneOut() }
func (hooks) InputScale(m *Model) float64             { return m.inputScale() }
func (hooks) BatchPredictor(m *Model) *Predictor      { return m.batchPredictor() }
func (hooks) SetUpdateLimit(m *Model, n int)          { m.setUpdateLimit(n) }

func (hooks) RestoreCalibration(m *Model, r reject.Rule, pool []float32) error {
	return m.restoreCalibration(r, pool)
}

func (hooks) Expand(m *Model, ctx context.Context, x []float32) ([]float32, error) {
	return m.expandCodes(ctx, x)
}

// setUpdateLimit sets how many samples learned or forgotten since the
// last factorisation of G + λI the model keeps that factor for (adding
// each learn's rank-n term to its low-rank term instead of refactoring):
// 0 always refactors, a negative value restores the default,
// ridge.UpdateLimit(m). Benchmarks and tests use it to run both
// paths; the result is the same up to float32 rounding (see
// ridge.DriftTolerance).
func (m *Model) setUpdateLimit(n int) {
	if m.acc != nil { // the dual form has no factor to keep
		m.acc.SetUpdateLimit(n)
	}
}

// expandCodes maps the n×d features x to their n×m sparse codes
// top-k(x Wᵀ) (of x times the model's input scale, which is 1 unless the
// λ grid is relative: see LambdaRelative).
func (m *Model) expandCodes(ctx context.Context, x []float32) ([]float32, error) {
	h, _, err := m.expand(ctx, x, nil)
	return h, err
}

// batchPredictor returns the model's predictor scoring by BLAS products
// (sgemm) instead of row by row: several times faster on a whole test
// set, and a sample's scores may depend, in the last bits, on the other
// samples of the call.
func (m *Model) batchPredictor() *Predictor {
	p := m.Predictor()
	p.batch = true
	return p
}
