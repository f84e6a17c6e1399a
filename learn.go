package flycl

import (
	"context"
	"fmt"
	"math"

	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/ridge"
)

// LearnOptions are the choices a learn makes. A nil *LearnOptions, like
// the zero value, learns as the paper does: λ chosen by GCV on the
// learn's own samples (Config.GCVScope), from the model's grid
// (Config.Lambdas).
//
// A mini-batch learned online is a learn like any other: with a fixed λ,
// a sequence of batches gives the same classifier as one learn of their
// union with that λ; without one, GCV scores λ on the batch itself (the
// only data an online learner holds).
type LearnOptions struct {
	// Lambda, when > 0, is the ridge parameter of the solve: no GCV runs.
	// 0 chooses λ as Policy says. Negative or not finite is an error.
	Lambda float64
	// Policy says how a learn with Lambda 0 chooses λ: LambdaGCV (the
	// default) by GCV on each learn, LambdaKeep by GCV on the first learn
	// only, later learns keeping the model's λ (and so its Cholesky
	// factor).
	Policy LambdaPolicy
	// Stats, when not nil, is the task given by its statistics instead of
	// its features (TaskStats, or the statistics of the task's shards
	// merged by ridge.Stats.Merge): Learn's x and labels must then be nil.
	// The model learns the task exactly as it would from the statistics of
	// the whole task. With LambdaRelative a model that has learned
	// nothing yet fixes its input scale at 1 (see TaskStats).
	Stats *ridge.Stats
}

// Learn learns one task: the n×d features x with their labels (any
// integers; classes may be new or already known), or the statistics of
// opt.Stats. It expands the features, adds them to the statistics,
// chooses λ (by GCV on this task unless opt says otherwise) and re-solves
// the classifier. nil opt is the paper's per-task GCV. On any error the
// model is unchanged (see TaskRecord for what a learn reports).
func (m *Model) Learn(ctx context.Context, x []float32, labels []int, opt *LearnOptions) (TaskRecord, error) {
	var o LearnOptions
	if opt != nil {
		o = *opt
	}
	lambda := o.Lambda
	if lambda < 0 || math.IsNaN(lambda) || math.IsInf(lambda, 0) {
		return TaskRecord{}, fmt.Errorf("flycl: lambda must be >= 0 and finite, got %g", lambda)
	}
	if lambda == 0 && o.Policy == LambdaKeep && m.coef != nil {
		lambda = m.lambda
	}
	if o.Stats != nil {
		if x != nil || labels != nil {
			return TaskRecord{}, fmt.Errorf("%w: a learn takes features or statistics, not both", ErrBadInput)
		}
		return m.learnStats(ctx, o.Stats, lambda)
	}
	return m.learn(ctx, x, labels, lambda)
}

// statsChunk is the number of samples TaskStats expands per call.
const statsChunk = 256

// TaskStats expands the n×d features x with the model's W and top-k and
// returns their statistics (G, S and class counts, in float64), without
// learning them: what one worker computes from its shard of a task.
// Inputs are multiplied by the model's InputScale, as Learn does (with
// LambdaRelative, a model that has learned nothing yet uses 1, and
// a learn of statistics then fixes it at 1). The
// statistics of the shards of a task, merged (ridge.Stats.Merge) and given
// to Learn (LearnOptions.Stats), teach the model the task exactly as the statistics of the
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
	// it is in. (The model's own Learn may use the dense product; its
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
	if m.dual != nil {
		if m.dual.Samples()+n <= m.cfg.Dual {
			return m.learnDual(ctx, x, labels, n, lambda)
		}
		if err := m.toPrimal(); err != nil {
			return TaskRecord{}, err
		}
	}
	s := m.begin()
	if m.cfg.LambdaScale == LambdaRelative && m.inScale == 0 {
		m.inScale = inputScaleFor(x) // the first task fixes the scale
	}
	h, st, err := m.expand(ctx, x, m.hbuf)
	if err != nil {
		return s.rollback(err)
	}
	m.hbuf = h
	if err := m.checkCodes(h, n); err != nil {
		return s.rollback(err)
	}
	s.st = st
	// Register classes only once the input is known to be valid.
	idx, fresh := m.classIndices(labels)
	s.rec = TaskRecord{Samples: n, NewClasses: fresh, Classes: distinctSorted(labels), Lambda: lambda}

	// GCV before touching the statistics, so a failure leaves them as they were.
	raise := m.solveGrid()
	if lambda == 0 {
		raise = m.grid(h, n)
		err := s.chooseLambda(ctx, raise,
			func(ctx context.Context, grid []float64) ([]float64, error) {
				local, nc := localIndices(idx)
				return m.gcv.GCV(ctx, h, n, m.cfg.M, local, nc, grid, m.cfg.GCV)
			},
			func(ctx context.Context, grid []float64) ([]float64, error) {
				return m.acc.GCVAllWith(ctx, h, n, idx, grid)
			})
		if err != nil {
			return s.rollback(err)
		}
		lambda, raise = s.rec.Lambda, s.rec.Grid // the grid as widened (Config.WidenGrid)
	}

	// When GCV formed this task's Gram HᵀH (the band method with n >= m),
	// the statistics update adds it instead of computing it again. When
	// the factor of G + λI is at hand for the λ chosen (the λ is compared
	// first, so a learn whose λ did not change does no m³ work), a small
	// step keeps it and adds its rank-n term instead of refactoring.
	err = s.change(func() (ridge.FactorUpdate, error) {
		if lower, diag, ok := m.gcv.TaskGram(h, n, m.cfg.M); ok && s.rec.GCV != nil && m.cfg.GCVScope == GCVTask {
			return ridge.FactorUpdate{}, m.acc.AddWithGram(h, n, idx, lower, diag)
		}
		if m.acc.FactorLambda() == lambda {
			return m.acc.AddUpdating(h, n, idx, lambda)
		}
		return ridge.FactorUpdate{}, m.acc.Add(h, n, idx)
	}, func() error { return m.acc.Sub(h, n, idx) })
	if err != nil {
		return s.rollback(fmt.Errorf("flycl: %w", err))
	}
	m.addCounts(idx, nil)

	rec, err := s.commit(raise)
	if err == nil {
		m.calibrateRows(ctx, h, n, idx, nil)
	}
	return rec, err
}

// learnStats learns a task given by its statistics (LearnOptions.Stats).
// GCV from statistics is the primal form computed from G and S alone
// (ridge.Stats.GCV), equal to the GCV of the task's samples up to
// rounding; with a fixed lambda > 0 no GCV is run.
func (m *Model) learnStats(ctx context.Context, st *ridge.Stats, lambda float64) (TaskRecord, error) {
	if st.M != m.cfg.M {
		return TaskRecord{}, fmt.Errorf("flycl: statistics have dimension %d, the model m=%d", st.M, m.cfg.M)
	}
	if err := st.Check(); err != nil {
		return TaskRecord{}, fmt.Errorf("flycl: %w", err)
	}
	if st.N == 0 {
		return TaskRecord{}, fmt.Errorf("flycl: empty task (no samples)")
	}
	if err := m.toPrimal(); err != nil { // statistics have no codes: the primal form takes them
		return TaskRecord{}, err
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
		m.uncalibrate() // no samples to calibrate on (calibrate.go)
	}
	return rec, err
}
