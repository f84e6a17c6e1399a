package flycl

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/flycl/flycl/internal/classindex"
	"github.com/flycl/flycl/linalg"
	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/ridge"
)

// Config holds Fly-CL's hyper-parameters. The zero value of a field means
// its default (DefaultConfig). Its JSON form names the fields as a model
// file's header does, and every enumeration by its name (MarshalText).
type Config struct {
	M    int    `json:"m"`    // expansion dimension m (default 10000)
	P    int    `json:"p"`    // non-zeros per row of W (default 300)
	K    int    `json:"k"`    // coordinates kept by top-k (default 3000)
	Seed uint64 `json:"seed"` // seed of W (default 0)

	TopK       projection.TopKMode `json:"topk"`                // signed (default, as the reference code) or magnitude
	Lambdas    []float64           `json:"lambdas"`             // GCV grid (default 1e6, 1e7, 1e8, 1e9)
	GCV        ridge.GCVMethod     `json:"gcv"`                 // how GCV is computed (default auto)
	GCVScope   GCVScope            `json:"gcv_scope,omitempty"` // which samples GCV scores λ on (default: the task's, as the paper)
	Projection projection.Method   `json:"projection"`          // how W is applied (default auto)
	// LambdaScale says whether Lambdas are absolute (default) or relative
	// to the mean diagonal of G (see LambdaRelative).
	LambdaScale LambdaScale `json:"lambda_scale,omitempty"`
}

// DefaultLambdas is the GCV grid of the paper's ViT-B/16 runs.
var DefaultLambdas = []float64{1e6, 1e7, 1e8, 1e9}

// DefaultConfig returns the paper's defaults: m=10000, p=300, k=3000, the
// grid 1e6..1e9, signed top-k.
func DefaultConfig() Config {
	return Config{M: 10000, P: 300, K: 3000, Lambdas: slices.Clone(DefaultLambdas)}
}

// withDefaults fills zero fields.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.M == 0 {
		c.M = d.M
	}
	if c.P == 0 {
		c.P = d.P
	}
	if c.K == 0 {
		c.K = d.K
	}
	if len(c.Lambdas) == 0 {
		c.Lambdas = d.Lambdas
		if c.LambdaScale == LambdaRelative {
			c.Lambdas = DefaultRelativeLambdas
		}
	}
	c.Lambdas = slices.Clone(c.Lambdas)
	return c
}

// Validate reports the first invalid field for inputs of dimension d.
func (c Config) Validate(d int) error {
	switch {
	case d <= 0:
		return fmt.Errorf("flycl: input dimension must be positive, got %d", d)
	case c.M <= 0:
		return fmt.Errorf("flycl: m must be positive, got %d", c.M)
	case c.P <= 0 || c.P > d:
		return fmt.Errorf("flycl: p must be in [1, d=%d], got %d", d, c.P)
	case c.K <= 0 || c.K > c.M:
		return fmt.Errorf("flycl: k must be in [1, m=%d], got %d", c.M, c.K)
	}
	for _, l := range c.Lambdas {
		if !(l > 0) || math.IsInf(l, 0) {
			return fmt.Errorf("flycl: lambda %g is not a positive finite number", l)
		}
	}
	if c.GCVScope != GCVTask && c.GCVScope != GCVAll {
		return fmt.Errorf("flycl: unknown GCV scope %d", c.GCVScope)
	}
	if c.LambdaScale != LambdaAbsolute && c.LambdaScale != LambdaRelative {
		return fmt.Errorf("flycl: unknown lambda scale %d", c.LambdaScale)
	}
	return nil
}

// TaskRecord describes one learning step (a task, or a batch online).
type TaskRecord struct {
	Samples    int       // samples in the step
	NewClasses []int     // labels first seen in the step
	Lambda     float64   // ridge parameter used for the solve
	RaisedFrom float64   // λ chosen by GCV when the solve had to raise it (else 0)
	GCV        []float64 // GCV score per grid value (nil if λ was fixed)
	Grid       []float64 // the λ values GCV scored, in Config.Lambdas order (nil if λ was fixed)
	GCVScope   GCVScope  // the samples GCV scored λ on (when GCV ran)
	Stages     Stages
	Removed    []int // labels forgotten in this step (Forget, DropClass); no samples learned
	Classes    []int // labels of the samples learned in the step, ascending (nil in old model files)
	// FactorUpdated says that the step changed the Cholesky factor of
	// G + λI by its rank-n term (an update, or a downdate for Forget)
	// instead of factoring it afresh (not kept in model files).
	FactorUpdated bool
}

// Model is a Fly-CL classifier. Its methods are not safe for concurrent
// use, except Scores/Predict/Expand, which may run concurrently with each
// other but not with learning.
type Model struct {
	cfg    Config
	d      int
	w      *projection.Matrix
	acc    *ridge.Accumulator
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
	// rejection of unknown inputs and its calibration (see unknown.go)
	rej    Rejection
	calib  *UnknownCalibration
	loo    []float32 // leave-one-out scores of the last calibration
	looIdx []int     // their class indices
	pool   []float32 // recent leave-one-out open-set scores, newest first

	// scratch reused across tasks (see ReleaseScratch)
	hbuf []float32
	gcv  ridge.Workspace
	// code buffers of prediction chunks (predictChunk × m), reused so
	// that evaluation does not make the garbage collector grow the heap
	codes sync.Pool
}

// ReleaseScratch frees the working memory kept between learning steps
// (the codes of the largest task so far and the GCV matrix, n×m and n×n
// floats). Learning works without it but pays for allocating again.
func (m *Model) ReleaseScratch() {
	m.hbuf = nil
	m.gcv.Release()
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

// Projection returns W.
func (m *Model) Projection() *projection.Matrix { return m.w }

// Classes returns the labels learned so far, in class-index order.
func (m *Model) Classes() []int { return slices.Clone(m.labels) }

// History returns the record of every learning step.
func (m *Model) History() []TaskRecord { return slices.Clone(m.hist) }

// Lambda returns the ridge parameter of the current classifier (0 before
// the first solve).
func (m *Model) Lambda() float64 { return m.lambda }

// Samples returns how many training samples the model has seen.
func (m *Model) Samples() int { return m.acc.Samples() }

func (m *Model) checkInput(x []float32) (int, error) {
	if len(x)%m.d != 0 {
		return 0, fmt.Errorf("%w: feature matrix has %d values, not a multiple of the input dimension %d", ErrBadInput, len(x), m.d)
	}
	return len(x) / m.d, nil
}

// Expand maps the n×d features x to their n×m sparse codes top-k(x Wᵀ)
// (of x times InputScale, which is 1 unless the λ grid is relative).
func (m *Model) Expand(ctx context.Context, x []float32) ([]float32, error) {
	h, _, err := m.expand(ctx, x, nil)
	return h, err
}

// expand computes the codes into buf when it is large enough.
func (m *Model) expand(ctx context.Context, x []float32, buf []float32) ([]float32, Stages, error) {
	var st Stages
	n, err := m.checkInput(x)
	if err != nil {
		return nil, st, err
	}
	t0 := time.Now()
	x = m.scaleInput(x)
	h := buf
	if cap(h) < n*m.cfg.M {
		h = make([]float32, n*m.cfg.M)
	}
	h = h[:n*m.cfg.M]
	if err := m.w.Apply(ctx, m.cfg.Projection, x, n, h); err != nil {
		return nil, st, fmt.Errorf("flycl: %w", err)
	}
	t1 := time.Now()
	projection.TopK(h, n, m.cfg.M, m.cfg.K, m.cfg.TopK)
	st.Projection, st.TopK = t1.Sub(t0), time.Since(t1)
	return h, st, ctx.Err()
}

// classIndices maps labels to class indices, registering unseen labels
// (in ascending order) and returning them.
func (m *Model) classIndices(labels []int) (idx []int, fresh []int) {
	return classindex.Register(&m.labels, m.index, labels)
}

// LearnTask learns one task: the n×d features x with their labels (any
// integers; classes may be new or already known). It expands the
// features, adds them to the statistics, chooses λ by GCV on this task,
// and re-solves the classifier.
func (m *Model) LearnTask(ctx context.Context, x []float32, labels []int) (TaskRecord, error) {
	return m.learn(ctx, x, labels, 0)
}

// LearnBatch is the online variant: it adds one mini-batch to the
// statistics and re-solves immediately. With lambda > 0 that λ is used;
// with lambda == 0 it is chosen by GCV on the mini-batch itself (the only
// data an online learner holds). A sequence of batches learned with the
// same fixed λ gives the same classifier as LearnTask on their union with
// that λ.
func (m *Model) LearnBatch(ctx context.Context, x []float32, labels []int, lambda float64) (TaskRecord, error) {
	if lambda < 0 || math.IsNaN(lambda) || math.IsInf(lambda, 0) {
		return TaskRecord{}, fmt.Errorf("flycl: online lambda must be >= 0 and finite, got %g", lambda)
	}
	return m.learn(ctx, x, labels, lambda)
}

// LearnTaskWithLambda learns a task like LearnTask but with a fixed λ
// instead of GCV.
func (m *Model) LearnTaskWithLambda(ctx context.Context, x []float32, labels []int, lambda float64) (TaskRecord, error) {
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return TaskRecord{}, fmt.Errorf("flycl: lambda must be positive and finite, got %g", lambda)
	}
	return m.learn(ctx, x, labels, lambda)
}

func (m *Model) learn(ctx context.Context, x []float32, labels []int, lambda float64) (TaskRecord, error) {
	n, err := m.checkInput(x)
	if err != nil {
		return TaskRecord{}, err
	}
	if n == 0 {
		return TaskRecord{}, fmt.Errorf("%w: empty task (no samples)", ErrBadInput)
	}
	if len(labels) != n {
		return TaskRecord{}, fmt.Errorf("%w: %d labels for %d samples", ErrBadInput, len(labels), n)
	}
	firstScale := m.cfg.LambdaScale == LambdaRelative && m.inScale == 0
	if firstScale {
		m.inScale = inputScaleFor(x)
	}
	h, st, err := m.expand(ctx, x, m.hbuf)
	if err != nil {
		if firstScale {
			m.inScale = 0
		}
		return TaskRecord{}, err
	}
	m.hbuf = h
	if err := m.checkCodes(h, n); err != nil {
		if firstScale {
			m.inScale = 0
		}
		return TaskRecord{}, err
	}
	u := m.mark()
	// Register classes only once the input is known to be valid.
	oldLabels, oldIndex := len(m.labels), maps.Clone(m.index)
	idx, fresh := m.classIndices(labels)
	rollback := func() {
		m.labels = m.labels[:oldLabels]
		m.index = oldIndex
		if firstScale {
			m.inScale = 0
		}
	}
	rec := TaskRecord{Samples: n, NewClasses: fresh, Classes: distinctSorted(labels)}

	// GCV before touching the statistics, so a failure leaves the model as it was.
	grid := m.solveGrid()
	if lambda == 0 {
		t := time.Now()
		var scores []float64
		var err error
		grid = m.grid(h, n)
		if m.cfg.GCVScope == GCVAll {
			scores, err = m.acc.GCVAllWith(ctx, h, n, idx, grid)
		} else {
			local, nc := localIndices(idx)
			scores, err = m.gcv.GCV(ctx, h, n, m.cfg.M, local, nc, grid, m.cfg.GCV)
		}
		if err != nil {
			rollback()
			return TaskRecord{}, fmt.Errorf("flycl: %w", err)
		}
		rec.GCV, rec.Grid, rec.GCVScope = scores, grid, m.cfg.GCVScope
		lambda = grid[ridge.BestLambda(scores)]
		st.GCV = time.Since(t)
	}
	rec.Lambda = lambda

	t := time.Now()
	// When GCV formed this task's Gram HᵀH (the band method with n >= m),
	// the statistics update adds it instead of computing it again. When
	// the factor of G + λI is at hand for the λ chosen (the λ is compared
	// first, so a learn whose λ did not change does no m³ work), a small
	// step updates it by its rank-n term instead of refactoring.
	var addErr error
	var up ridge.FactorUpdate
	if lower, diag, ok := m.gcv.TaskGram(h, n, m.cfg.M); ok && rec.GCV != nil && m.cfg.GCVScope == GCVTask {
		addErr = m.acc.AddWithGram(h, n, idx, lower, diag)
	} else if m.acc.FactorLambda() == lambda {
		up, addErr = m.acc.AddUpdating(h, n, idx, lambda)
	} else {
		addErr = m.acc.Add(h, n, idx)
	}
	if err := addErr; err != nil {
		rollback()
		return TaskRecord{}, fmt.Errorf("flycl: %w", err)
	}
	st.Gram = time.Since(t) - up.Duration
	st.Factor = up.Duration
	rec.FactorUpdated = up.Updated
	m.countSamples(idx)

	rec, err = m.finish(rec, st, grid, u, func() error { return m.acc.Sub(h, n, idx) })
	if err == nil {
		m.calibrate(ctx, h, n, idx)
	}
	return rec, err
}

// solve factors G + λI (unless the factor at hand is that of G + λI:
// updated by the step, see ridge.Accumulator.AddUpdating) and solves for
// C. In float32, G + λI of a
// rank-deficient G (fewer samples than m) with a tiny λ can fail to be
// numerically positive definite; then λ is raised to the next larger grid
// value, and beyond the grid by factors of 10, until the factorisation
// succeeds. It returns the λ used. On error (no λ factors, or the
// classifier comes out not finite) the classifier and λ are unchanged and
// the caller takes its step back out of the statistics.
func (m *Model) solve(ctx context.Context, lambda float64, grid []float64, st *Stages) (float64, error) {
	t := time.Now()
	candidates := []float64{lambda}
	for _, l := range slices.Sorted(slices.Values(grid)) {
		if l > lambda {
			candidates = append(candidates, l)
		}
	}
	for last := candidates[len(candidates)-1]; len(candidates) < 40; {
		last *= 10
		candidates = append(candidates, last)
	}
	var err error
	for _, l := range candidates {
		if m.acc.FactorLambda() == l {
			lambda = l
			break
		}
		if err = m.acc.Factor(ctx, l); err == nil {
			lambda = l
			break
		}
		var npd *linalg.NotPositiveDefiniteError
		if !errors.As(err, &npd) {
			return 0, fmt.Errorf("flycl: %w", err)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("flycl: %w", err)
	}
	t1 := time.Now()
	coef := slices.Clone(m.acc.S())
	m.acc.SolveRows(coef, m.acc.Classes())
	if i := firstNonFinite(coef); i >= 0 {
		return 0, errTooLarge(fmt.Sprintf("classifier value %d (class %d) came out %v with λ=%g", i, i/m.cfg.M, coef[i], lambda))
	}
	m.coef, m.lambda = coef, lambda
	st.Factor, st.Solve = st.Factor+t1.Sub(t), time.Since(t1)
	return lambda, nil
}

// localIndices renumbers class indices to 0..nc-1 in order of value.
func localIndices(idx []int) ([]int, int) {
	u := slices.Clone(idx)
	slices.Sort(u)
	u = slices.Compact(u)
	pos := make(map[int]int, len(u))
	for i, v := range u {
		pos[v] = i
	}
	out := make([]int, len(idx))
	for i, v := range idx {
		out[i] = pos[v]
	}
	return out, len(u)
}

// predictChunk bounds the memory of prediction: codes are computed for at
// most this many samples at a time.
const predictChunk = 1024

// Scores returns the n×c matrix of class scores h'ᵀC for the n×d
// features x, one column per learned class in Classes() order (an error
// for features whose scores are not finite, as Predictor.Scores).
func (m *Model) Scores(ctx context.Context, x []float32) ([]float32, error) {
	if m.coef == nil {
		return nil, ErrNotTrained
	}
	n, err := m.checkInput(x)
	if err != nil {
		return nil, err
	}
	nc := len(m.labels)
	out := make([]float32, n*nc)
	for lo := 0; lo < n; lo += predictChunk {
		hi := min(n, lo+predictChunk)
		buf, _ := m.codes.Get().([]float32)
		h, _, err := m.expand(ctx, x[lo*m.d:hi*m.d], buf)
		if err != nil {
			return nil, err
		}
		scoreRows(h, hi-lo, m.cfg.M, m.coef, nc, out[lo*nc:hi*nc])
		m.codes.Put(h[:cap(h)])
		if err := checkScores(out[lo*nc:hi*nc], nc, lo, func(c int) string { return fmt.Sprintf("%q", m.ClassName(m.labels[c])) }); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Predict returns the predicted label of each of the n×d features x.
func (m *Model) Predict(ctx context.Context, x []float32) ([]int, error) {
	s, err := m.Scores(ctx, x)
	if err != nil {
		return nil, err
	}
	nc := len(m.labels)
	n := len(s) / nc
	out := make([]int, n)
	for i := 0; i < n; i++ {
		out[i] = m.labels[argmax(s[i*nc:(i+1)*nc])]
	}
	return out, nil
}

// Accuracy returns the fraction of x predicted as labels. A label the model
// has never learned is an error (class-incremental evaluation only tests
// seen classes).
func (m *Model) Accuracy(ctx context.Context, x []float32, labels []int) (float64, error) {
	for i, l := range labels {
		if _, ok := m.index[l]; !ok {
			return 0, fmt.Errorf("flycl: test sample %d has label %d, which the model has not learned", i, l)
		}
	}
	pred, err := m.Predict(ctx, x)
	if err != nil {
		return 0, err
	}
	if len(pred) != len(labels) {
		return 0, fmt.Errorf("flycl: %d labels for %d samples", len(labels), len(pred))
	}
	if len(pred) == 0 {
		return 0, fmt.Errorf("flycl: no test samples")
	}
	hit := 0
	for i := range pred {
		if pred[i] == labels[i] {
			hit++
		}
	}
	return float64(hit) / float64(len(pred)), nil
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
