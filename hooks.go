package flycl

import "github.com/flycl/flycl/internal/modelhook"

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
	modelhook.SetUpdateLimit = (*Model).setUpdateLimit
}
