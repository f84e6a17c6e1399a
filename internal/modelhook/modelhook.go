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
