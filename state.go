package flycl

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/reject"
	"github.com/flycl/flycl/ridge"
)

// State is what a Model holds besides W and the statistics G and S: enough,
// with them, to rebuild the model exactly (the model file does, see
// modelfile).
type State struct {
	Config   Config
	InputDim int
	Labels   []int        // class index -> label
	History  []TaskRecord // one record per learning step
	Lambda   float64      // λ of the current classifier (0 if none)
	Coef     []float32    // current classifier C, classes × m (nil if none)
	// Counts is the number of samples learned per class (class-index
	// order); -1 means unknown (models saved before counts were kept).
	// nil means all unknown.
	Counts []int
	// Names is the name of each class (class-index order); nil or ""
	// entries mean the label's decimal number.
	Names []string
	// Version counts the changes made to the model (learning steps and
	// forgotten classes); it only ever increases.
	Version uint64
	// InputScale is the power of two every input is multiplied by (see
	// LambdaRelative); 0 means none (1).
	InputScale float64
	// Rejection says when a prediction is unknown and holds the
	// probabilities. temperature (zero: off; see calibrate.go).
	Rejection reject.Rule
	// CalibrationPool holds the recent leave-one-out open-set scores the
	// rejection threshold is taken from, newest first (see
	// Model.SetCalibration).
	CalibrationPool []float32
	// Dual is the model's dual form (see Config.Dual): the samples' codes
	// and K; nil for a model in the primal form, whose statistics are G
	// and S.
	Dual *ridge.Dual
	// LambdaLimit says where the last continuous GCV choice of a dual
	// model fell in its range (ridge.Limit: "" inside, "interpolating" at
	// the floor, "constant" at the ceiling).
	LambdaLimit string
}

// state returns a copy of the model's state.
func (m *Model) state() State {
	st := m.stateShared()
	st.Coef = slices.Clone(st.Coef)
	return st
}

// stateShared is state with the coefficients shared with the model, for
// a reader that keeps them unchanged (a Predictor, restoreModel's copy):
// no method changes m.coef in place, every change makes a new slice.
func (m *Model) stateShared() State {
	classes := m.Classes()
	return State{
		Config:   m.Config(),
		InputDim: m.d,
		Labels:   slices.Clone(m.labels),
		History:  cloneHistory(m.hist),
		Lambda:   m.lambda,
		Coef:     m.coef,
		Counts:   classes.Counts(),
		Names:    classes.Names(),
		Version:  m.version,

		InputScale: m.inScale,
		Rejection:  m.rej,

		CalibrationPool: slices.Clone(m.pool),
		Dual:            m.dual, // shared: Snapshot and Clone copy it
		LambdaLimit:     string(m.limit),
	}
}

func cloneHistory(h []TaskRecord) []TaskRecord {
	out := slices.Clone(h)
	for i := range out {
		out[i].NewClasses = slices.Clone(out[i].NewClasses)
		out[i].GCV = slices.Clone(out[i].GCV)
		out[i].Removed = slices.Clone(out[i].Removed)
		out[i].Classes = slices.Clone(out[i].Classes)
	}
	return out
}

// validate checks that a state means something: shapes that fit, labels
// that are non-negative and distinct, finite values, a positive λ grid
// and history. restoreModel and newSnapshot call it, so every decoder of
// outside bytes gets the same checks.
func (st *State) validate(w *projection.Matrix) error {
	cfg := st.Config
	if w.M != cfg.M || w.P != cfg.P || w.D != st.InputDim {
		return fmt.Errorf("flycl: W is %d×%d with p=%d, state wants %d×%d with p=%d", w.M, w.D, w.P, cfg.M, st.InputDim, cfg.P)
	}
	if err := cfg.Validate(st.InputDim); err != nil {
		return err
	}
	if len(cfg.Lambdas) == 0 {
		return fmt.Errorf("flycl: empty lambda grid")
	}
	if !validInputScale(st.InputScale) {
		return fmt.Errorf("flycl: input scale %g is not a power of two from 2^%d to 2^%d", st.InputScale, minScaleExp, maxScaleExp)
	}
	nc := len(st.Labels)
	if st.Coef != nil && len(st.Coef) != nc*cfg.M {
		return fmt.Errorf("flycl: classifier has %d values, want %d classes × %d", len(st.Coef), nc, cfg.M)
	}
	if st.Coef == nil && nc > 0 {
		return fmt.Errorf("flycl: state has %d classes but no classifier", nc)
	}
	if i := firstNonFinite(st.Coef); i >= 0 {
		return fmt.Errorf("flycl: classifier value %d (class %d) is %v", i, i/cfg.M, st.Coef[i])
	}
	if st.Coef != nil && (!(st.Lambda > 0) || math.IsInf(st.Lambda, 0)) {
		return fmt.Errorf("flycl: lambda of the classifier is %g, want a positive finite number", st.Lambda)
	}
	seen := make(map[int]bool, nc)
	for i, l := range st.Labels {
		if l < 0 {
			return fmt.Errorf("flycl: class %d has negative label %d", i, l)
		}
		if seen[l] {
			return fmt.Errorf("flycl: label %d appears twice in the class map", l)
		}
		seen[l] = true
	}
	if st.Counts != nil && len(st.Counts) != nc {
		return fmt.Errorf("flycl: %d class counts for %d classes", len(st.Counts), nc)
	}
	for i, c := range st.Counts {
		if c < -1 {
			return fmt.Errorf("flycl: class %d has a negative sample count %d", i, c)
		}
	}
	if err := st.Rejection.Validate(); err != nil {
		return err
	}
	if i := firstNonFinite(st.CalibrationPool); i >= 0 {
		return fmt.Errorf("flycl: calibration pool value %d is %v", i, st.CalibrationPool[i])
	}
	if len(st.CalibrationPool) > reject.MaxCalibrationPool {
		return fmt.Errorf("flycl: calibration pool of %d scores, more than %d", len(st.CalibrationPool), reject.MaxCalibrationPool)
	}
	if st.Names != nil && len(st.Names) != nc {
		return fmt.Errorf("flycl: %d class names for %d classes", len(st.Names), nc)
	}
	names := map[string]int{}
	for i, l := range st.Labels {
		n := strconv.Itoa(l)
		if st.Names != nil && st.Names[i] != "" {
			n = st.Names[i]
		}
		if j, dup := names[n]; dup {
			return fmt.Errorf("flycl: classes %d and %d have the same name %q", j, i, n)
		}
		names[n] = i
	}
	for i, r := range st.History {
		if r.Samples < 0 {
			return fmt.Errorf("flycl: history step %d has a negative sample count %d", i, r.Samples)
		}
		if !(r.Lambda > 0) || math.IsInf(r.Lambda, 0) {
			return fmt.Errorf("flycl: history step %d has lambda %g, want a positive finite number", i, r.Lambda)
		}
	}
	return nil
}

func firstNonFinite(s []float32) int {
	for i, v := range s {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return i
		}
	}
	return -1
}

// restoreModel rebuilds a model from its state, W and statistics, checking that
// they fit together. The model takes ownership of acc. Learning then
// continues exactly as it would have in the original model.
func restoreModel(st State, w *projection.Matrix, acc *ridge.Accumulator) (*Model, error) {
	st.Config = st.Config.withDefaults()
	if err := st.validate(w); err != nil {
		return nil, err
	}
	cfg := st.Config
	nc := len(st.Labels)
	if st.Dual != nil {
		if err := checkDual(&st); err != nil {
			return nil, err
		}
	} else if err := checkAcc(cfg, acc, nc); err != nil {
		return nil, err
	}
	index := make(map[int]int, nc)
	for i, l := range st.Labels {
		index[l] = i
	}
	m := &Model{
		cfg: cfg, d: st.InputDim, w: w, acc: acc, dual: st.Dual, limit: ridge.Limit(st.LambdaLimit),
		labels: slices.Clone(st.Labels), index: index,
		hist: cloneHistory(st.History), coef: slices.Clone(st.Coef), lambda: st.Lambda,
		counts: make([]int, nc), names: map[int]string{}, version: st.Version, inScale: st.InputScale,
		rej: st.Rejection, pool: slices.Clone(st.CalibrationPool),
	}
	for i, l := range st.Labels {
		m.counts[i] = -1
		if st.Counts != nil {
			m.counts[i] = st.Counts[i]
		}
		if st.Names != nil && st.Names[i] != "" && st.Names[i] != strconv.Itoa(l) {
			m.names[l] = st.Names[i]
		}
	}
	return m, nil
}

// checkDual checks that a state's dual form fits it: dimension m,
// the classes of the class map, a known count per class at most the
// rows of the class.
func checkDual(st *State) error {
	d, nc := st.Dual, len(st.Labels)
	if d.Dim() != st.Config.M {
		return fmt.Errorf("flycl: dual form has dimension %d, want m=%d", d.Dim(), st.Config.M)
	}
	if d.Classes() != nc {
		return fmt.Errorf("flycl: dual form has %d classes, state has %d labels", d.Classes(), nc)
	}
	if st.Config.Dual <= 0 {
		return fmt.Errorf("flycl: a dual form in a model whose configuration has dual = %d", st.Config.Dual)
	}
	per := make([]int, nc)
	for i := range d.Samples() {
		if _, _, c := d.Row(i); c >= 0 {
			per[c]++
		}
	}
	for i, c := range st.Counts {
		if c >= 0 && c != per[i] {
			return fmt.Errorf("flycl: class %d counts %d samples, the dual form holds %d", i, c, per[i])
		}
	}
	return nil
}

// checkAcc checks that primal statistics fit a state.
func checkAcc(cfg Config, acc *ridge.Accumulator, nc int) error {
	if acc == nil {
		return fmt.Errorf("flycl: no statistics")
	}
	if acc.Dim() != cfg.M {
		return fmt.Errorf("flycl: statistics have dimension %d, want m=%d", acc.Dim(), cfg.M)
	}
	if acc.Classes() != nc {
		return fmt.Errorf("flycl: statistics have %d classes, state has %d labels", acc.Classes(), nc)
	}
	if acc.Samples() < 0 {
		return fmt.Errorf("flycl: statistics have a negative sample count %d", acc.Samples())
	}
	return nil
}
