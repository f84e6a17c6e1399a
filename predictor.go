package flycl

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"

	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/reject"
)

// Predictor returns an immutable classifier with the model's current
// classes and coefficients (a copy: later learning does not change it).
func (m *Model) Predictor() *Predictor {
	return newPredictor(m.stateShared(), m.w, m.Samples(), m.classSums())
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
	batch   bool // score by sgemm, not row by row (batchPredictor)
	sparse  bool // W applied by the sparse gather unless Config.Projection says (encoder.sparse)
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
		inScale: st.InputScale, rej: st.Rejection, sparse: st.Dual != nil}
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

// Classes returns the predictor's classes: labels in class-index order
// (the columns of Scores), names and sample counts.
func (p *Predictor) Classes() ClassList {
	c := ClassList{labels: slices.Clone(p.labels), counts: slices.Clone(p.counts), names: map[int]string{}}
	for i, l := range p.labels {
		if n := p.names[i]; n != strconv.Itoa(l) {
			c.names[l] = n
		}
	}
	return c
}

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
// alone, and as `flycl predict` does. (The module's research harnesses
// score whole test sets with a predictor from internal/codec's
// BatchPredictor, which uses sgemm instead: faster, and its scores may
// differ from these in the last bits.)
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
	return scorer{enc: encoder{w: p.w, cfg: p.cfg, inScale: p.inScale, sparse: p.sparse}, d: p.d, coef: p.coef, nc: len(p.labels),
		rowExact: !p.batch, codes: &p.codes, name: func(c int) string { return fmt.Sprintf("%q", p.names[c]) },
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

// Accuracy returns the fraction of x predicted as labels. A label the model
// has never learned is an error (class-incremental evaluation only tests
// seen classes).
func (p *Predictor) Accuracy(ctx context.Context, x []float32, labels []int) (float64, error) {
	known := make(map[int]bool, len(p.labels))
	for _, l := range p.labels {
		known[l] = true
	}
	for i, l := range labels {
		if !known[l] {
			return 0, fmt.Errorf("flycl: test sample %d has label %d, which the model had not learned", i, l)
		}
	}
	pred, err := p.Predict(ctx, x)
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
