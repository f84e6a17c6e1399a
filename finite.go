package flycl

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
)

// GramLimit bounds every diagonal entry of the float32 Gram matrix G a
// model accepts: a quarter of the largest float32 (3.4e38). Off-diagonal
// entries are bounded by the diagonal (|G_ij| ≤ √(G_ii·G_jj), Cauchy–Schwarz),
// and so are the sums the Cholesky factorisation of G + λI forms, so with
// this margin (for float32 rounding of the sums and for λ) the statistics
// and the factor stay finite. Features whose codes would take G past it
// (features of magnitude about 1e19 and more) are refused.
const GramLimit = math.MaxFloat32 / 4

// errTooLarge is the error for features whose statistics float32 cannot
// hold.
func errTooLarge(what string) error {
	return fmt.Errorf("%w (%s): scale the features down, or use --lambda-scale relative (LambdaRelative), which scales the inputs by a power of two", ErrTooLarge, what)
}

// checkCodes checks that the n×m codes h are finite and that adding them
// keeps every diagonal entry of G within GramLimit.
func (m *Model) checkCodes(h []float32, n int) error {
	if i := firstNonFinite(h); i >= 0 {
		return errTooLarge(fmt.Sprintf("sample %d: code %d is %v", i/m.cfg.M, i%m.cfg.M, h[i]))
	}
	mm := m.cfg.M
	diag := make([]float64, mm)
	for j := range diag {
		diag[j] = float64(m.acc.G(j, j))
	}
	for i := 0; i < n; i++ {
		for j, v := range h[i*mm : (i+1)*mm] {
			diag[j] += float64(v) * float64(v)
		}
	}
	for j, v := range diag {
		if v > GramLimit {
			return errTooLarge(fmt.Sprintf("G[%d][%d] would reach %.3g, more than %.3g", j, j, v, GramLimit))
		}
	}
	return nil
}

// undo restores the statistics and class map recorded by mark after a
// step whose solve failed; see mark.
type undo struct {
	s       []float32
	nc, n   int
	labels  []int
	index   map[int]int
	counts  []int
	inScale float64
	names   map[int]string
}

// mark records what restore needs to take back a step that changes the
// statistics: S, the class map, the counts (all small, classes × m at
// most). G is not copied (m² values): restore takes the step's codes out
// of it again, which returns it to its value up to float32 rounding.
func (m *Model) mark() *undo {
	return &undo{
		s: slices.Clone(m.acc.S()), nc: m.acc.Classes(), n: m.acc.Samples(),
		labels: slices.Clone(m.labels), index: maps.Clone(m.index),
		counts: slices.Clone(m.counts), inScale: m.inScale, names: maps.Clone(m.names),
	}
}

// restore puts back S, the class map and the counts recorded by mark;
// the caller has already taken the step's change out of G.
func (m *Model) restore(u *undo) {
	m.acc.SetS(u.s, u.nc, u.n)
	m.labels = u.labels
	m.index = u.index
	m.counts = u.counts
	m.inScale = u.inScale
	m.names = u.names
}

// finish is the end of every learning step (LearnTask, LearnBatch,
// LearnStats), once the step is in the statistics: re-solve with rec.Lambda
// (raised within grid if G + λI cannot be factored), then record the step
// and bump the version. The solve runs to the end even if the caller's
// context is cancelled, so the classifier always matches the statistics.
// If it fails, takeBack removes the step from G and restore(u) puts back
// everything else: the model is as it was (G up to float32 rounding).
func (m *Model) finish(rec TaskRecord, st Stages, grid []float64, u *undo, takeBack func() error) (TaskRecord, error) {
	lambda := rec.Lambda
	used, err := m.solve(context.Background(), lambda, grid, &st)
	if err != nil {
		if e := takeBack(); e != nil {
			return TaskRecord{}, fmt.Errorf("%w (undo: %v)", err, e)
		}
		m.restore(u)
		return TaskRecord{}, err
	}
	if used != lambda {
		rec.RaisedFrom, rec.Lambda = lambda, used
	}
	rec.Stages = st
	m.hist = append(m.hist, rec)
	m.version++
	return rec, nil
}
