package flycl

import (
	"fmt"
	"slices"
	"sync"

	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/ridge"
)

// Snapshot is an immutable copy of a model: its state, W, and the
// statistics G and S. Encoders save from it (so saving never races with
// learning), Model rebuilds a mutable model from it, and Predictor serves
// predictions from it. All its methods are safe for concurrent use.
//
// Memory: a snapshot holds G's lower triangle, m(m+1)/2 float32 (200 MB
// at m = 10000), besides S and C (classes × m each); a view
// (internal/codec.View) shares the model's G and S instead.
type Snapshot struct {
	st      State
	w       *projection.Matrix
	g       []float32          // lower triangle of G, row i at i(i+1)/2 (nil in a view)
	acc     *ridge.Accumulator // a view's statistics, shared with its model
	s       []float32          // classes × m
	samples int

	once sync.Once
	pred *Predictor
}

// Validate runs the checks newSnapshot makes on decoded parts, so that an
// encoder can refuse to write what a decoder would refuse to read.
// Snapshots taken from a model pass them unless learning went wrong.
func (s *Snapshot) Validate() error {
	if s.w == nil {
		return fmt.Errorf("flycl: snapshot has no W")
	}
	st := s.st
	if st.Dual != nil {
		return checkDualParts(&st, s.w, s.s, s.samples)
	}
	if s.acc != nil {
		if s.acc.Dim() != st.Config.M {
			return fmt.Errorf("flycl: G is %d×%d, want m=%d", s.acc.Dim(), s.acc.Dim(), st.Config.M)
		}
		var row []float32
		return checkParts(&st, s.w, func(i int) []float32 { row = s.acc.AppendLowerRow(row[:0], i); return row }, s.s, s.samples)
	}
	m := st.Config.M
	if len(s.g) != m*(m+1)/2 {
		return fmt.Errorf("flycl: G has %d values, want m(m+1)/2 = %d", len(s.g), m*(m+1)/2)
	}
	return checkParts(&st, s.w, s.lowerRow, s.s, s.samples)
}

// checkParts checks that a state, W and statistics fit together and mean
// something (see newSnapshot); row(i) is G[i][0..i], for i < m.
func checkParts(st *State, w *projection.Matrix, row func(i int) []float32, s []float32, samples int) error {
	if err := st.validate(w); err != nil {
		return err
	}
	m, nc := st.Config.M, len(st.Labels)
	if len(s) != nc*m {
		return fmt.Errorf("flycl: S has %d values, want %d classes × %d", len(s), nc, m)
	}
	for i := 0; i < m; i++ {
		r := row(i)
		if j := firstNonFinite(r); j >= 0 {
			return fmt.Errorf("flycl: G[%d][%d] is %v", i, j, r[j])
		}
		if v := r[i]; v < 0 {
			return fmt.Errorf("flycl: G[%d][%d] = %v: a Gram matrix has no negative diagonal", i, i, v)
		}
	}
	if i := firstNonFinite(s); i >= 0 {
		return fmt.Errorf("flycl: S[%d][%d] is %v", i/m, i%m, s[i])
	}
	if samples < 0 {
		return fmt.Errorf("flycl: negative sample count %d", samples)
	}
	known := 0
	for _, c := range st.Counts {
		known += max(c, 0)
	}
	if known > samples {
		return fmt.Errorf("flycl: class counts add up to %d, more than the %d samples of the statistics", known, samples)
	}
	if nc > 0 && samples == 0 {
		return fmt.Errorf("flycl: %d classes learned from no samples", nc)
	}
	return nil
}

// Snapshot returns an immutable copy of the model.
func (m *Model) Snapshot() *Snapshot {
	if m.dual != nil {
		st := m.state()
		st.Dual = m.dual.Clone()
		return &Snapshot{st: st, w: m.w, s: m.dual.S(), samples: m.dual.Samples()}
	}
	return &Snapshot{st: m.state(), w: m.w, g: m.acc.PackedLower(), s: slices.Clone(m.acc.S()), samples: m.acc.Samples()}
}

// snapshotView returns a snapshot that shares the model's statistics G
// and S instead of copying them (G alone is m(m+1)/2 float32, 200 MB at
// m = 10000): for saving the model from the goroutine that owns it. The
// view is valid only until the model next changes; use Snapshot for one
// that outlives that.
func (m *Model) snapshotView() *Snapshot {
	if m.dual != nil {
		return &Snapshot{st: m.state(), w: m.w, s: m.dual.S(), samples: m.dual.Samples()}
	}
	return &Snapshot{st: m.state(), w: m.w, acc: m.acc, s: m.acc.S(), samples: m.acc.Samples()}
}

// newSnapshot assembles a snapshot from decoded parts, checking that they
// fit together and mean something (see State for the checks; G and S must
// be finite, G's diagonal non-negative, the sample count non-negative and
// at least the sum of the known class counts). g is G's packed lower
// triangle (see ridge.Accumulator.PackedLower). The snapshot takes
// ownership of g and s.
func newSnapshot(st State, w *projection.Matrix, g, s []float32, samples int) (*Snapshot, error) {
	st.Config = st.Config.withDefaults()
	if st.Dual != nil && s == nil {
		s = st.Dual.S()
	}
	sn := &Snapshot{st: st, w: w, g: g, s: s, samples: samples}
	if err := sn.Validate(); err != nil {
		return nil, err
	}
	if st.Counts == nil {
		st.Counts = make([]int, len(st.Labels))
		for i := range st.Counts {
			st.Counts[i] = -1
		}
	}
	sn.st = st
	return sn, nil
}

// State returns a copy of the snapshot's state.
func (s *Snapshot) State() State {
	st := s.st
	st.Config.Lambdas = slices.Clone(st.Config.Lambdas)
	st.Labels, st.Coef = slices.Clone(st.Labels), slices.Clone(st.Coef)
	st.Counts, st.Names = slices.Clone(st.Counts), slices.Clone(st.Names)
	st.History = cloneHistory(st.History)
	return st
}

// Version returns the model version the snapshot was taken at.
func (s *Snapshot) Version() uint64 { return s.st.Version }

// Projection returns W (shared: do not modify).
func (s *Snapshot) Projection() *projection.Matrix { return s.w }

// Samples returns the number of samples in the statistics.
func (s *Snapshot) Samples() int { return s.samples }

// lowerRow returns G[i][0..i] (shared, or a copy for a view: do not
// modify).
func (s *Snapshot) lowerRow(i int) []float32 {
	if d := s.st.Dual; d != nil {
		return appendDualLowerRow(nil, d, i)
	}
	if s.acc != nil {
		return s.acc.LowerRow(i)
	}
	o := i * (i + 1) / 2
	return s.g[o : o+i+1 : o+i+1]
}

// appendLowerRow appends G[i][0..i] to dst and returns it (for encoders
// that reuse one buffer).
func (s *Snapshot) appendLowerRow(dst []float32, i int) []float32 {
	if d := s.st.Dual; d != nil {
		return appendDualLowerRow(dst, d, i)
	}
	if s.acc != nil {
		return s.acc.AppendLowerRow(dst, i)
	}
	o := i * (i + 1) / 2
	return append(dst, s.g[o:o+i+1]...)
}

// S returns S, classes × m (shared: do not modify).
func (s *Snapshot) S() []float32 { return s.s[:len(s.s):len(s.s)] }

// Coef returns the classifier C, classes × m, nil before the first solve
// (shared: do not modify).
func (s *Snapshot) Coef() []float32 { return s.st.Coef[:len(s.st.Coef):len(s.st.Coef)] }

// Model returns a new mutable model with the snapshot's content (it
// allocates the m×m statistics).
func (s *Snapshot) Model() (*Model, error) {
	if s.st.Dual != nil {
		st := s.State()
		st.Dual = s.st.Dual.Clone()
		return restoreModel(st, s.w, nil)
	}
	var acc *ridge.Accumulator
	if s.acc != nil {
		acc = s.acc.Clone()
	} else {
		var err error
		if acc, err = ridge.NewAccumulator(s.st.Config.M); err != nil {
			return nil, err
		}
		if err := acc.SetPackedLower(s.g); err != nil {
			return nil, err
		}
	}
	if err := acc.SetS(s.s, len(s.st.Labels), s.samples); err != nil {
		return nil, err
	}
	return restoreModel(s.State(), s.w, acc)
}

// Predictor returns the snapshot's classifier (built once, shared).
func (s *Snapshot) Predictor() *Predictor {
	s.once.Do(func() { s.pred = newPredictor(s.st, s.w, s.samples, s.s) })
	return s.pred
}
