package flycl

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/ridge"
)

// GCVScope says on which samples GCV scores the ridge parameter of a task.
type GCVScope int

const (
	// GCVTask scores λ on the current task only (the paper's choice).
	GCVTask GCVScope = iota
	// GCVAll scores λ on every sample learned so far, the current task
	// included, computed exactly from the accumulated statistics G, S and
	// the sample counts (no samples are stored); see
	// ridge.Accumulator.GCVAllWith. It costs one float64 tridiagonal
	// reduction of an m×m matrix per task.
	GCVAll
)

func (s GCVScope) String() string {
	if s == GCVAll {
		return "all"
	}
	return "task"
}

// ParseGCVScope parses "task" (or "") and "all".
func ParseGCVScope(s string) (GCVScope, error) {
	switch s {
	case "task", "":
		return GCVTask, nil
	case "all":
		return GCVAll, nil
	}
	return GCVTask, fmt.Errorf("flycl: unknown GCV scope %q (want task or all)", s)
}

// MarshalText writes the scope's name ("task" or "all").
func (s GCVScope) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses a scope's name.
func (s *GCVScope) UnmarshalText(b []byte) error {
	v, err := ParseGCVScope(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// statsChunk is the number of samples TaskStats expands per call.
const statsChunk = 256

// statsGrid is the grid for a task given by its statistics:
// Config.Lambdas, times the mean diagonal of the Gram matrix GCV works on
// with LambdaRelative.
func (m *Model) statsGrid(st *ridge.Stats) []float64 {
	if m.cfg.LambdaScale != LambdaRelative {
		return slices.Clone(m.cfg.Lambdas)
	}
	var tr float64
	for i := 0; i < st.M; i++ {
		tr += st.G[i*(i+1)/2+i]
	}
	return m.scaledGrid(tr, true)
}

// TaskStats expands the n×d features x with the model's W and top-k and
// returns their statistics (G, S and class counts, in float64), without
// learning them: what one worker computes from its shard of a task.
// Inputs are multiplied by the model's InputScale, as LearnTask does (with
// LambdaRelative, a model that has learned nothing yet uses 1, and
// LearnStats then fixes it at 1). The
// statistics of the shards of a task, merged (ridge.Stats.Merge) and given
// to LearnStats, teach the model the task exactly as the statistics of the
// whole task would. Codes are expanded in chunks of samples, so memory stays
// bounded by the chunk, not the shard.
func (m *Model) TaskStats(ctx context.Context, x []float32, labels []int) (*ridge.Stats, error) {
	n, err := m.checkInput(x)
	if err != nil {
		return nil, err
	}
	if len(labels) != n {
		return nil, fmt.Errorf("flycl: %d labels for %d samples", len(labels), n)
	}
	st, err := ridge.NewStats(m.cfg.M)
	if err != nil {
		return nil, err
	}
	// W is applied by the sparse gather, whose arithmetic for a sample
	// involves that sample alone: BLAS kernels (OpenBLAS's Haswell sgemm
	// among them) may round a row differently depending on where it sits in
	// the block, and a sample's code must be the same bits whatever shard
	// it is in. (The model's own LearnTask may use the dense product; its
	// codes then differ from these in the last bits.)
	buf := make([]float32, min(n, statsChunk)*m.cfg.M)
	for lo := 0; lo < n; lo += statsChunk {
		hi := min(n, lo+statsChunk)
		h := buf[:(hi-lo)*m.cfg.M]
		if err := m.w.Apply(ctx, projection.Sparse, m.scaleInput(x[lo*m.d:hi*m.d]), hi-lo, h); err != nil {
			return nil, fmt.Errorf("flycl: %w", err)
		}
		projection.TopK(h, hi-lo, m.cfg.M, m.cfg.K, m.cfg.TopK)
		if err := st.Add(h, hi-lo, labels[lo:hi]); err != nil {
			return nil, fmt.Errorf("flycl: %w", err)
		}
	}
	return st, nil
}

// LearnStats learns a task given by its statistics (TaskStats, or the
// merged statistics of its shards) instead of its features: it chooses λ
// by GCV on the statistics (the task's alone, or with GCVAll everything
// learned so far plus the task), adds them to the model's statistics and
// re-solves. GCV from statistics is the primal form computed from G and S
// alone (ridge.Stats.GCV), equal to the GCV of the task's samples up to
// rounding; with a fixed lambda > 0 no GCV is run.
func (m *Model) LearnStats(ctx context.Context, st *ridge.Stats, lambda float64) (TaskRecord, error) {
	if lambda < 0 || math.IsNaN(lambda) || math.IsInf(lambda, 0) {
		return TaskRecord{}, fmt.Errorf("flycl: lambda must be >= 0 and finite, got %g", lambda)
	}
	if st.M != m.cfg.M {
		return TaskRecord{}, fmt.Errorf("flycl: statistics have dimension %d, the model m=%d", st.M, m.cfg.M)
	}
	if err := st.Check(); err != nil {
		return TaskRecord{}, fmt.Errorf("flycl: %w", err)
	}
	if st.N == 0 {
		return TaskRecord{}, fmt.Errorf("flycl: empty task (no samples)")
	}
	for i := 0; i < st.M; i++ {
		if v := float64(m.acc.G(i, i)) + st.G[i*(i+1)/2+i]; v > GramLimit {
			return TaskRecord{}, errTooLarge(fmt.Sprintf("G[%d][%d] would reach %.3g, more than %.3g", i, i, v, GramLimit))
		}
	}
	u := m.mark()
	oldLabels, oldIndex := len(m.labels), maps.Clone(m.index)
	idx, fresh := m.classIndices(st.Labels)
	rollback := func() {
		m.labels = m.labels[:oldLabels]
		m.index = oldIndex
	}
	rec := TaskRecord{Samples: st.N, NewClasses: fresh, Classes: distinctSorted(st.Labels)}
	var stages Stages
	grid := m.solveGrid()
	if lambda == 0 {
		t := time.Now()
		var scores []float64
		var err error
		grid = m.statsGrid(st)
		if m.cfg.GCVScope == GCVAll {
			scores, err = m.acc.GCVAllWithStats(ctx, st, idx, grid)
		} else {
			scores, err = st.GCV(ctx, grid)
		}
		if err != nil {
			rollback()
			return TaskRecord{}, fmt.Errorf("flycl: %w", err)
		}
		rec.GCV, rec.Grid, rec.GCVScope = scores, grid, m.cfg.GCVScope
		lambda = grid[ridge.BestLambda(scores)]
		stages.GCV = time.Since(t)
	}
	rec.Lambda = lambda
	t := time.Now()
	if err := m.acc.AddStats(st, idx); err != nil {
		rollback()
		return TaskRecord{}, fmt.Errorf("flycl: %w", err)
	}
	stages.Gram = time.Since(t)
	for len(m.counts) < len(m.labels) {
		m.counts = append(m.counts, 0)
	}
	for r, c := range idx {
		if m.counts[c] >= 0 {
			m.counts[c] += st.Counts[r]
		}
	}
	if m.cfg.LambdaScale == LambdaRelative && m.inScale == 0 {
		m.inScale = 1 // the statistics were computed from unscaled inputs (restore undoes it)
	}
	rec, err := m.finish(rec, stages, m.solveGrid(), u, func() error { return m.acc.SubStats(st, idx) })
	if err == nil {
		m.uncalibrate() // no samples to calibrate on (unknown.go)
	}
	return rec, err
}
