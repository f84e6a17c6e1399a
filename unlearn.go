package flycl

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/flycl/flycl/ridge"
)

// Unlearn takes samples a learn added back out of the model exactly: x
// holds their n×d features and labels their classes, as they were learned
// (in any order). Their codes are subtracted from G and from their classes'
// rows of S; a class left with no sample is removed; and the classifier is
// re-solved with lambda, the λ the model had before that learn. Undoing the
// last learn this way gives the model as it was before it, up to float32
// rounding in G (the classes, their counts and S exactly, when the classes
// the learn added were new). The version still grows: the result is a new
// version with the old content.
//
// A class whose sample count is known and smaller than the samples given
// is refused; so is a removed class whose row of S differs from the sum of
// the codes by more than ForgetMismatch (data that is not what it
// learned). On any error the model is unchanged (G up to float32 rounding
// when the re-solve failed).
func (m *Model) Unlearn(ctx context.Context, x []float32, labels []int, lambda float64) (TaskRecord, error) {
	n, err := m.checkInput(x)
	if err != nil {
		return TaskRecord{}, err
	}
	switch {
	case n == 0:
		return TaskRecord{}, fmt.Errorf("%w: unlearn: no samples given", ErrBadInput)
	case len(labels) != n:
		return TaskRecord{}, fmt.Errorf("%w: unlearn: %d labels for %d samples", ErrBadInput, len(labels), n)
	case !(lambda > 0) || math.IsInf(lambda, 0):
		return TaskRecord{}, fmt.Errorf("flycl: unlearn: lambda must be positive and finite, got %g", lambda)
	}
	idx := make([]int, n)
	per := map[int]int{}
	for i, l := range labels {
		c, ok := m.index[l]
		if !ok {
			return TaskRecord{}, fmt.Errorf("flycl: unlearn: %w %d", ErrUnknownClass, l)
		}
		idx[i] = c
		per[c]++
	}
	var emptied []int // class indices left with no sample
	for c, k := range per {
		if c < len(m.counts) && m.counts[c] >= 0 {
			if m.counts[c] < k {
				return TaskRecord{}, fmt.Errorf("%w: unlearn: class %q learned %d samples, %d given", ErrBadInput, m.className(m.labels[c]), m.counts[c], k)
			}
			if m.counts[c] == k {
				emptied = append(emptied, c)
			}
		}
	}
	if m.dual != nil {
		return m.unlearnDual(ctx, x, n, idx, per, emptied, lambda)
	}
	h, st, err := m.expand(ctx, x, nil)
	if err != nil {
		return TaskRecord{}, err
	}
	// A class that goes must be exactly what the samples made of it.
	for _, c := range emptied {
		if rel := m.classMismatch(c, h, n, idx); rel > ForgetMismatch {
			return TaskRecord{}, fmt.Errorf("%w: unlearn: the samples of class %q are not what it learned (its statistics differ by %.2g, relative)", ErrBadInput, m.className(m.labels[c]), rel)
		}
	}
	s := m.begin()
	s.st, s.rec = st, TaskRecord{Samples: n, Lambda: lambda}
	err = s.change(func() (ridge.FactorUpdate, error) { return ridge.FactorUpdate{}, m.acc.Sub(h, n, idx) },
		func() error { return m.acc.Add(h, n, idx) })
	if err != nil {
		return s.rollback(fmt.Errorf("flycl: unlearn: %w", err))
	}
	return m.finishUnlearn(s, per, emptied)
}

// finishUnlearn ends an Unlearn once the statistics have let the samples
// go: counts, emptied classes, the re-solve.
func (m *Model) finishUnlearn(s *step, per map[int]int, emptied []int) (TaskRecord, error) {
	for c, k := range per {
		if c < len(m.counts) && m.counts[c] >= 0 {
			m.counts[c] -= k
		}
	}
	// remove emptied classes, highest index first (indices shift)
	slices.Sort(emptied)
	for i := len(emptied) - 1; i >= 0; i-- {
		label := m.labels[emptied[i]]
		if err := m.removeClass(emptied[i]); err != nil {
			return s.rollback(err)
		}
		s.rec.Removed = append(s.rec.Removed, label)
	}
	slices.Sort(s.rec.Removed)
	return s.commit(m.solveGrid())
}
