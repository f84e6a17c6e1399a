package flycl

import (
	"context"

	"github.com/flycl/flycl/internal/modelhook"
)

// The functions the model file's codec (internal/codec) reaches a model
// through, set once before any package can use them and kept out of this
// package's API.
func init() {
	modelhook.Restore = restoreModel
	modelhook.NewSnapshot = newSnapshot
	modelhook.AppendLowerRow = (*Snapshot).appendLowerRow
	modelhook.View = (*Model).snapshotView
	modelhook.CalibrationPool = (*Model).calibrationPool
	modelhook.RestoreCalibration = (*Model).restoreCalibration
	modelhook.LeaveOneOut = (*Model).leaveOneOut
	modelhook.InputScale = (*Model).inputScale
	modelhook.Expand = (*Model).expandCodes
	modelhook.BatchPredictor = (*Model).batchPredictor
	modelhook.SetUpdateLimit = (*Model).setUpdateLimit
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
