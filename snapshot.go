package flycl

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/reject"
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
	return &Snapshot{st: m.state(), w: m.w, g: m.acc.PackedLower(), s: slices.Clone(m.acc.S()), samples: m.acc.Samples()}
}

// snapshotView returns a snapshot that shares the model's statistics G
// and S instead of copying them (G alone is m(m+1)/2 float32, 200 MB at
// m = 10000): for saving the model from the goroutine that owns it. The
// view is valid only until the model next changes; use Snapshot for one
// that outlives that.
func (m *Model) snapshotView() *Snapshot {
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
	if s.acc != nil {
		return s.acc.LowerRow(i)
	}
	o := i * (i + 1) / 2
	return s.g[o : o+i+1 : o+i+1]
}

// appendLowerRow appends G[i][0..i] to dst and returns it (for encoders
// that reuse one buffer).
func (s *Snapshot) appendLowerRow(dst []float32, i int) []float32 {
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

// Clone returns an independent deep copy of the model (statistics
// included), for example to learn off to the side while the original
// keeps serving.
func (m *Model) Clone() *Model {
	c, err := restoreModel(m.state(), m.w, m.acc.Clone())
	if err != nil {
		panic("flycl: Clone of a valid model failed: " + err.Error())
	}
	c.calib = m.calib
	return c
}

// Predictor returns an immutable classifier with the model's current
// classes and coefficients (a copy: later learning does not change it).
func (m *Model) Predictor() *Predictor {
	return newPredictor(m.state(), m.w, m.acc.Samples(), m.acc.S())
}

// Predictor is an immutable Fly-CL classifier: W, the class map and C.
// All its methods are safe for concurrent use, so a server can keep the
// current one behind an atomic pointer and swap in a new one after every
// learn: predictions never wait for learning.
type Predictor struct {
	cfg     Config
	d       int
	w       *projection.Matrix
	labels  []int
	names   []string
	counts  []int
	coef    []float32
	lambda  float64
	version uint64
	samples int
	inScale float64
	rej     reject.Rule
	codes   sync.Pool
	// the rows of S at unit length, and which are not zero, for the
	// cosines of ScoresCosines
	unit   []float32
	hasSum []bool
}

// newPredictor builds a predictor from a state, W, the sample count and
// S (classes × m; read, not kept).
func newPredictor(st State, w *projection.Matrix, samples int, s []float32) *Predictor {
	p := &Predictor{cfg: st.Config, d: st.InputDim, w: w, labels: st.Labels, coef: st.Coef,
		lambda: st.Lambda, version: st.Version, samples: samples, counts: st.Counts, names: make([]string, len(st.Labels)),
		inScale: st.InputScale, rej: st.Rejection}
	p.unit, p.hasSum = reject.UnitRows(s, len(st.Labels), st.Config.M)
	for i, l := range st.Labels {
		p.names[i] = fmt.Sprint(l)
		if st.Names != nil && st.Names[i] != "" {
			p.names[i] = st.Names[i]
		}
	}
	if p.counts == nil {
		p.counts = make([]int, len(st.Labels))
		for i := range p.counts {
			p.counts[i] = -1
		}
	}
	return p
}

// Config returns the model's configuration.
func (p *Predictor) Config() Config { c := p.cfg; c.Lambdas = slices.Clone(c.Lambdas); return c }

// InputDim returns d, the feature dimension.
func (p *Predictor) InputDim() int { return p.d }

// Classes returns the labels in class-index order.
func (p *Predictor) Classes() []int { return slices.Clone(p.labels) }

// ClassNames returns the class names in Classes() order.
func (p *Predictor) ClassNames() []string { return slices.Clone(p.names) }

// ClassCounts returns the samples learned per class (-1: unknown).
func (p *Predictor) ClassCounts() []int { return slices.Clone(p.counts) }

// Version returns the model version.
func (p *Predictor) Version() uint64 { return p.version }

// Lambda returns the ridge parameter of the classifier.
func (p *Predictor) Lambda() float64 { return p.lambda }

// Samples returns how many samples the statistics held.
func (p *Predictor) Samples() int { return p.samples }

// Rejection returns the model's calibrated rejection (zero: off).
func (p *Predictor) Rejection() reject.Rule { return p.rej }

// Scores returns the n×c class scores of the n×d features x, one column
// per class in Classes() order. A sample's scores depend on that sample
// alone, to the bit: W is applied and the scores summed row by row
// (projection.Matrix.ApplyRows, linalg.SdotRows), never by a BLAS gemm
// whose rounding depends on the other rows of the call. So a server that
// scores concurrent requests together answers each exactly as it would
// alone, and as `flycl predict` does. (Model.Scores, built for whole test
// sets, uses sgemm; its scores may differ from these in the last bits.)
// Features too large for the float32 expansion (about 3e38) give an error
// naming the first score that is not finite, never a NaN.
func (p *Predictor) Scores(ctx context.Context, x []float32) ([]float32, error) {
	return p.scorer().scores(ctx, x)
}

// ScoresCosines returns what Scores does and, for every sample, the
// cosine of its code h to the nearest class sum of codes: max over
// classes c of S_c·h/(‖S_c‖‖h‖), S_c the row of S (0 for a zero code).
// A rejection whose score needs it (reject.Score.NeedsCosine) reads it:
// Rejection.Reject(row, cos). Like the scores, a sample's cosine depends
// on that sample alone, to the bit. The extra cost is a second product
// of the codes with a classes × m matrix, as for the scores.
func (p *Predictor) ScoresCosines(ctx context.Context, x []float32) ([]float32, []float64, error) {
	return p.scorer().scoresCosines(ctx, x, true)
}

func (p *Predictor) scorer() scorer {
	return scorer{enc: encoder{w: p.w, cfg: p.cfg, inScale: p.inScale}, d: p.d, coef: p.coef, nc: len(p.labels),
		rowExact: true, codes: &p.codes, name: func(c int) string { return fmt.Sprintf("%q", p.names[c]) },
		unit: p.unit, hasSum: p.hasSum}
}

// Predict returns the predicted label of each of the n×d features x.
func (p *Predictor) Predict(ctx context.Context, x []float32) ([]int, error) {
	s, err := p.Scores(ctx, x)
	if err != nil {
		return nil, err
	}
	nc := len(p.labels)
	out := make([]int, len(s)/nc)
	for i := range out {
		out[i] = p.labels[argmax(s[i*nc:(i+1)*nc])]
	}
	return out, nil
}

// Ranked is one class of a ranking: its label, name and score.
type Ranked struct {
	Label int     `json:"label"`
	Name  string  `json:"name"`
	Score float32 `json:"score"`
}

// Top returns, for each of the n×d features x, the top classes by score
// (at most topN, best first; ties keep class order).
func (p *Predictor) Top(ctx context.Context, x []float32, topN int) ([][]Ranked, error) {
	if topN <= 0 {
		return nil, fmt.Errorf("flycl: top-N must be positive, got %d", topN)
	}
	s, err := p.Scores(ctx, x)
	if err != nil {
		return nil, err
	}
	return p.Rank(s, topN), nil
}

// Rank turns scores (n × classes, as Scores returns) into the top topN
// classes of every row.
func (p *Predictor) Rank(scores []float32, topN int) [][]Ranked {
	nc := len(p.labels)
	if nc == 0 {
		return nil
	}
	n := len(scores) / nc
	out := make([][]Ranked, n)
	idx := make([]int, nc)
	for i := 0; i < n; i++ {
		row := scores[i*nc : (i+1)*nc]
		for j := range idx {
			idx[j] = j
		}
		sort.SliceStable(idx, func(a, b int) bool { return row[idx[a]] > row[idx[b]] })
		k := min(topN, nc)
		out[i] = make([]Ranked, k)
		for j := 0; j < k; j++ {
			c := idx[j]
			out[i][j] = Ranked{Label: p.labels[c], Name: p.names[c], Score: row[c]}
		}
	}
	return out
}
