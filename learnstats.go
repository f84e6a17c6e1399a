package flycl

import (
	"context"
	"fmt"
	"math"

	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/ridge"
)

// statsChunk is the number of samples TaskStats expands per call.
const statsChunk = 256

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
	enc := m.encoder()
	for lo := 0; lo < n; lo += statsChunk {
		hi := min(n, lo+statsChunk)
		h := buf[:(hi-lo)*m.cfg.M]
		if _, err := enc.encode(ctx, projection.Sparse, false, x[lo*m.d:hi*m.d], hi-lo, h); err != nil {
			return nil, err
		}
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
	s := m.begin()
	idx, fresh := m.classIndices(st.Labels)
	s.rec = TaskRecord{Samples: st.N, NewClasses: fresh, Classes: distinctSorted(st.Labels), Lambda: lambda}
	if lambda == 0 {
		err := s.chooseLambda(ctx, m.statsGrid(st),
			func(ctx context.Context, grid []float64) ([]float64, error) { return st.GCV(ctx, grid) },
			func(ctx context.Context, grid []float64) ([]float64, error) {
				return m.acc.GCVAllWithStats(ctx, st, idx, grid)
			})
		if err != nil {
			return s.rollback(err)
		}
	}
	err := s.change(func() (ridge.FactorUpdate, error) { return ridge.FactorUpdate{}, m.acc.AddStats(st, idx) },
		func() error { return m.acc.SubStats(st, idx) })
	if err != nil {
		return s.rollback(fmt.Errorf("flycl: %w", err))
	}
	m.addCounts(idx, st.Counts)
	if m.cfg.LambdaScale == LambdaRelative && m.inScale == 0 {
		m.inScale = 1 // the statistics were computed from unscaled inputs
	}
	// The solve raises λ within solveGrid: by factors of 10 with a
	// relative grid (a task learned from codes raises it within its scaled
	// GCV grid, the same values up to rounding for a grid of decades).
	rec, err := s.commit(m.solveGrid())
	if err == nil {
		m.uncalibrate() // no samples to calibrate on (unknown.go)
	}
	return rec, err
}
