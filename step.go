package flycl

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/flycl/flycl/ridge"
)

// A step is one change of the model's statistics, run as a transaction:
// a task or a batch (learn), a task's statistics (LearnOptions.Stats), a forgotten
// class (Forget) or unlearned samples (Unlearn). Each of those says only
// what is its own; the step does the rest:
//
//	s := m.begin()            // record what a rollback puts back
//	...                       // set the input scale, register classes,
//	                          // choose λ (s.chooseLambda) into s.rec
//	s.change(apply, takeBack) // change G and S; takeBack undoes it in G
//	return s.commit(raise)    // re-solve and record the step
//
// and, on an error anywhere before commit, return s.rollback(err). A step
// that fails, before commit or in its solve, leaves the model as it was:
// the class map, names, counts, input scale, S, the sample count, λ, the
// classifier, the history and the version exactly, and G up to float32
// rounding when the statistics had taken the step in (takeBack removes
// it again: m² values are not copied).
type step struct {
	m        *Model
	u        *undo
	takeBack func() error // removes the step's change from G; nil until change
	rec      TaskRecord   // the step's record; rec.Lambda is the λ commit solves with
	st       Stages
}

// begin starts a step: it records what rollback needs (see mark).
func (m *Model) begin() *step { return &step{m: m, u: m.mark()} }

// change makes the step's change of G and S (apply: an add or a
// subtraction, which may update the Cholesky factor by its rank-n term)
// and records how to take it back out of G (takeBack). It times apply as
// the Gram stage, less the factor update's part, which is the Factor
// stage. apply must leave the statistics as they were when it fails;
// takeBack runs before the class map, S and the counts are put back, so
// it sees them as the step left them (a class the step removed is gone
// from S; ridge.Accumulator.Add makes room for it again).
func (s *step) change(apply func() (ridge.FactorUpdate, error), takeBack func() error) error {
	t := time.Now()
	up, err := apply()
	if err != nil {
		return err
	}
	s.takeBack = takeBack
	s.st.Gram, s.st.Factor = time.Since(t)-up.Duration, up.Duration
	s.rec.FactorUpdated = up.Updated
	return nil
}

// chooseLambda scores the λ values of grid by GCV, with task (on the
// step's samples) or all (on everything learned so far plus the step) as
// Config.GCVScope says, widened beyond an edge with Config.WidenGrid
// (widenLambdas, and the choice widenedBest), and makes the best the
// step's λ; the record keeps the
// scores, the grid (widened) and the scope. It runs before the statistics
// change, so its failure leaves them as they were.
func (s *step) chooseLambda(ctx context.Context, grid []float64, task, all func(ctx context.Context, grid []float64) ([]float64, error)) error {
	t := time.Now()
	score := task
	if s.m.cfg.GCVScope == GCVAll {
		score = all
	}
	scores, err := score(ctx, grid)
	if err != nil {
		return fmt.Errorf("flycl: %w", err)
	}
	if s.m.cfg.WidenGrid {
		if grid, scores, err = widenLambdas(ctx, grid, scores, score); err != nil {
			return fmt.Errorf("flycl: %w", err)
		}
	}
	s.rec.GCV, s.rec.Grid, s.rec.GCVScope = scores, grid, s.m.cfg.GCVScope
	best := ridge.BestLambda(scores)
	if s.m.cfg.WidenGrid {
		best = widenedBest(grid, scores)
	}
	s.rec.Lambda = grid[best]
	s.st.GCV = time.Since(t)
	return nil
}

// commit ends the step once G and S hold it: unless no class is left, it
// re-solves the classifier with s.rec.Lambda (raised within raise, then by
// factors of 10, when G + λI cannot be factored; see solve), then records
// the step and bumps the version. The solve runs to the end even if the
// caller's context is cancelled, so the classifier always matches the
// statistics. If the solve fails, the step is rolled back.
func (s *step) commit(raise []float64) (TaskRecord, error) {
	m := s.m
	if len(m.labels) > 0 {
		used, err := m.solve(context.Background(), s.rec.Lambda, raise, &s.st)
		if err != nil {
			return s.rollback(err)
		}
		if used != s.rec.Lambda {
			s.rec.RaisedFrom, s.rec.Lambda = s.rec.Lambda, used
		}
	}
	s.rec.Stages = s.st
	m.record(s.rec)
	return s.rec, nil
}

// rollback takes the step back and returns err: the statistics change (if
// any) comes out of G by takeBack, and restore puts back the rest. If
// takeBack itself fails, the model keeps the step in its statistics (with
// the old classifier) and the error says so.
func (s *step) rollback(err error) (TaskRecord, error) {
	if s.takeBack != nil {
		if e := s.takeBack(); e != nil {
			return TaskRecord{}, fmt.Errorf("%w (undo: %v)", err, e)
		}
	}
	s.m.restore(s.u)
	return TaskRecord{}, err
}

// record appends a finished change to the history and bumps the version.
func (m *Model) record(rec TaskRecord) {
	m.hist = append(m.hist, rec)
	m.version++
}

// undo is what mark records for a rollback.
type undo struct {
	dual    *ridge.Dual // the dual form (a copy), when the model is in it
	s       []float32
	nc, n   int
	labels  []int
	index   map[int]int
	counts  []int
	inScale float64
	names   map[int]string
}

// mark records what restore needs to take back a step that changes the
// statistics: S, the class map, the counts, the names and the input scale
// (all small, classes × m at most). G is not copied (m² values): the
// step's takeBack takes its change out of G again, which returns G to its
// value up to float32 rounding. The classifier and λ need no copy: solve
// changes them only when it succeeds, the step's last act.
func (m *Model) mark() *undo {
	if m.dual != nil {
		return &undo{dual: m.dual.Clone(), labels: slices.Clone(m.labels), index: maps.Clone(m.index),
			counts: slices.Clone(m.counts), inScale: m.inScale, names: maps.Clone(m.names)}
	}
	return &undo{
		s: slices.Clone(m.acc.S()), nc: m.acc.Classes(), n: m.acc.Samples(),
		labels: slices.Clone(m.labels), index: maps.Clone(m.index),
		counts: slices.Clone(m.counts), inScale: m.inScale, names: maps.Clone(m.names),
	}
}

// restore puts back S, the sample count, the class map, the counts, the
// names and the input scale recorded by mark; G is the caller's (the
// step's takeBack).
func (m *Model) restore(u *undo) {
	if u.dual != nil {
		m.dual, m.sol = u.dual, nil
	} else {
		m.acc.SetS(u.s, u.nc, u.n)
	}
	m.labels = u.labels
	m.index = u.index
	m.counts = u.counts
	m.inScale = u.inScale
	m.names = u.names
}
