package flycl

import (
	"fmt"
	"slices"

	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/ridge"
)

// State is what a Model holds besides W and the statistics G and S: enough,
// with them, to rebuild the model exactly (see Restore).
type State struct {
	Config   Config
	InputDim int
	Labels   []int        // class index -> label
	History  []TaskRecord // one record per learning step
	Lambda   float64      // λ of the current classifier (0 if none)
	Coef     []float32    // current classifier C, classes × m (nil if none)
}

// State returns a copy of the model's state.
func (m *Model) State() State {
	return State{
		Config:   m.Config(),
		InputDim: m.d,
		Labels:   slices.Clone(m.labels),
		History:  slices.Clone(m.hist),
		Lambda:   m.lambda,
		Coef:     slices.Clone(m.coef),
	}
}

// Statistics returns the model's running statistics (shared, not a copy:
// modifying them changes what the model learns next).
func (m *Model) Statistics() *ridge.Accumulator { return m.acc }

// Restore rebuilds a model from its state, W and statistics, checking that
// they fit together. Learning then continues exactly as it would have in
// the original model.
func Restore(st State, w *projection.Matrix, acc *ridge.Accumulator) (*Model, error) {
	cfg := st.Config.withDefaults()
	if w.M != cfg.M || w.P != cfg.P || w.D != st.InputDim {
		return nil, fmt.Errorf("flycl: W is %d×%d with p=%d, state wants %d×%d with p=%d", w.M, w.D, w.P, cfg.M, st.InputDim, cfg.P)
	}
	if err := cfg.Validate(st.InputDim); err != nil {
		return nil, err
	}
	if acc.Dim() != cfg.M {
		return nil, fmt.Errorf("flycl: statistics have dimension %d, want m=%d", acc.Dim(), cfg.M)
	}
	nc := len(st.Labels)
	if acc.Classes() != nc {
		return nil, fmt.Errorf("flycl: statistics have %d classes, state has %d labels", acc.Classes(), nc)
	}
	if st.Coef != nil && len(st.Coef) != nc*cfg.M {
		return nil, fmt.Errorf("flycl: classifier has %d values, want %d classes × %d", len(st.Coef), nc, cfg.M)
	}
	if st.Coef == nil && nc > 0 {
		return nil, fmt.Errorf("flycl: state has %d classes but no classifier", nc)
	}
	index := make(map[int]int, nc)
	for i, l := range st.Labels {
		if _, dup := index[l]; dup {
			return nil, fmt.Errorf("flycl: label %d appears twice in the class map", l)
		}
		index[l] = i
	}
	return &Model{
		cfg: cfg, d: st.InputDim, w: w, acc: acc,
		labels: slices.Clone(st.Labels), index: index,
		hist: slices.Clone(st.History), coef: slices.Clone(st.Coef), lambda: st.Lambda,
	}, nil
}
