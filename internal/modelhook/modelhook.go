// Package modelhook hands the few functions that reach inside a flycl
// model (to restore one from a model file's parts, to write its
// statistics, to carry its calibration through a journal) from the root
// package to internal/codec, which sits above the root and types them.
// They are kept out of the root package's API: only the module's own
// readers and writers of model files, and its research and benchmark
// harnesses, use them.
//
// Package flycl sets every variable once, in its init, before any other
// package can read them; nothing changes them after. Each is a func of
// the type its comment gives (internal/codec asserts it), in the style of
// grpc's internal package: this package cannot name flycl's types, which
// import it.
package modelhook

var (
	// Restore is func(flycl.State, *projection.Matrix, *ridge.Accumulator) (*flycl.Model, error).
	Restore any
	// NewSnapshot is func(flycl.State, *projection.Matrix, g, s []float32, samples int) (*flycl.Snapshot, error).
	NewSnapshot any
	// AppendLowerRow is func(*flycl.Snapshot, dst []float32, i int) []float32.
	AppendLowerRow any
	// View is func(*flycl.Model) *flycl.Snapshot.
	View any
	// CalibrationPool is func(*flycl.Model) []float32.
	CalibrationPool any
	// RestoreCalibration is func(*flycl.Model, reject.Rule, []float32) error.
	RestoreCalibration any
	// LeaveOneOut is func(*flycl.Model) (scores []float32, classes []int).
	LeaveOneOut any
	// InputScale is func(*flycl.Model) float64.
	InputScale any
	// Expand is func(*flycl.Model, context.Context, []float32) ([]float32, error).
	Expand any
	// BatchPredictor is func(*flycl.Model) *flycl.Predictor.
	BatchPredictor any
	// SetUpdateLimit is func(*flycl.Model, int).
	SetUpdateLimit any
)
