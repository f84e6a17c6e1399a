package flycl

import (
	"context"
	"slices"

	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/reject"
	"github.com/flycl/flycl/ridge"
)

// Model is a Fly-CL classifier. Its methods are not safe for concurrent
// use, except Scores/Predict/Expand, which may run concurrently with each
// other but not with learning.
type Model struct {
	cfg Config
	d   int
	w   *projection.Matrix
	acc *ridge.Accumulator // the primal statistics (nil while dual)
	// the dual form (nil while primal; see dual.go), its solution at λ
	// (nil until needed) and where in its range the last continuous
	// GCV choice fell
	dual   *ridge.Dual
	sol    *ridge.Solution
	limit  ridge.Limit
	labels []int       // class index -> label
	index  map[int]int // label -> class index
	hist   []TaskRecord
	coef   []float32 // nc × m, from the last solve
	lambda float64   // λ of the last solve
	// per class: samples learned (-1: unknown, from an old model file)
	counts []int
	// class names by label (see names.go); labels without one are named by their number
	names   map[int]string
	version uint64 // incremented by every change (see Version)
	// inScale multiplies every input (a power of two; 0: none chosen yet,
	// meaning 1). Only LambdaRelative sets it, from the first task.
	inScale float64
	// rejection of unknown inputs and its calibration (see calibrate.go)
	rej    reject.Rule
	calib  *reject.Calibration
	loo    []float32 // leave-one-out scores of the last calibration
	looIdx []int     // their class indices
	pool   []float32 // recent leave-one-out open-set scores, newest first

	// scratch reused across tasks
	hbuf []float32
	gcv  ridge.Workspace
}

// New returns an untrained model for d-dimensional features whose W is
// generated from cfg.Seed.
func New(cfg Config, d int) (*Model, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(d); err != nil {
		return nil, err
	}
	w, err := projection.Generate(cfg.M, d, cfg.P, cfg.Seed)
	if err != nil {
		return nil, err
	}
	return NewWithProjection(cfg, w)
}

// NewWithProjection returns an untrained model using the given W (for
// example one exported by another implementation); cfg.M and cfg.P are
// taken from W.
func NewWithProjection(cfg Config, w *projection.Matrix) (*Model, error) {
	cfg = cfg.withDefaults()
	cfg.M, cfg.P = w.M, w.P
	if w.Seed != nil {
		cfg.Seed = *w.Seed
	}
	if err := cfg.Validate(w.D); err != nil {
		return nil, err
	}
	if cfg.Dual > 0 {
		d, err := ridge.NewDual(cfg.M)
		if err != nil {
			return nil, err
		}
		return &Model{cfg: cfg, d: w.D, w: w, dual: d, index: map[int]int{}}, nil
	}
	acc, err := ridge.NewAccumulator(cfg.M)
	if err != nil {
		return nil, err
	}
	return &Model{cfg: cfg, d: w.D, w: w, acc: acc, index: map[int]int{}}, nil
}

// Config returns the model's configuration (defaults filled in).
func (m *Model) Config() Config { c := m.cfg; c.Lambdas = slices.Clone(c.Lambdas); return c }

// InputDim returns d, the feature dimension.
func (m *Model) InputDim() int { return m.d }

// History returns the record of every learning step.
func (m *Model) History() []TaskRecord { return slices.Clone(m.hist) }

// Lambda returns the ridge parameter of the current classifier (0 before
// the first solve).
func (m *Model) Lambda() float64 { return m.lambda }

// Samples returns how many training samples the model has seen.
func (m *Model) Samples() int {
	if m.dual != nil {
		return m.dual.Samples()
	}
	return m.acc.Samples()
}

func (m *Model) checkInput(x []float32) (int, error) { return rows(x, m.d) }

// expand computes the codes into buf when it is large enough.
func (m *Model) expand(ctx context.Context, x []float32, buf []float32) ([]float32, Stages, error) {
	n, err := m.checkInput(x)
	if err != nil {
		return nil, Stages{}, err
	}
	h := buf
	if cap(h) < n*m.cfg.M {
		h = make([]float32, n*m.cfg.M)
	}
	h = h[:n*m.cfg.M]
	st, err := m.encoder().encode(ctx, m.cfg.Projection, false, x, n, h)
	if err != nil {
		return nil, st, err
	}
	return h, st, nil
}

func argmax(s []float32) int {
	b := 0
	for i, v := range s {
		if v > s[b] {
			b = i
		}
	}
	return b
}

// Version returns the model version: it starts at 0 and increases by one
// with every learning step and every forgotten class, so two snapshots of
// one model with the same version hold the same classifier.
func (m *Model) Version() uint64 { return m.version }

// Clone returns an independent deep copy of the model (statistics
// included), for example to learn off to the side while the original
// keeps serving.
func (m *Model) Clone() *Model {
	st := m.stateShared() // restoreModel copies the coefficients
	var acc *ridge.Accumulator
	if m.dual != nil {
		st.Dual = m.dual.Clone()
	} else {
		acc = m.acc.Clone()
	}
	c, err := restoreModel(st, m.w, acc)
	if err != nil {
		panic("flycl: Clone of a valid model failed: " + err.Error())
	}
	c.calib = m.calib
	return c
}
