package flycl

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/flycl/flycl/ridge"
)

// ForgetMismatch bounds the relative difference between a class's row of
// S and the sum of the codes of the data given to Forget. Rounding alone
// gives differences of order n·2⁻²⁴ (float32 sums of n codes) plus the
// projection's rounding, about 1e-5 for thousands of samples; data that
// is not what the class learned (another sample in place of one of them,
// a subset) differs by order 1/n, which this catches for classes of up to
// about a thousand samples. The sample count, when known, is checked
// exactly as well.
const ForgetMismatch = 1e-3

// Forget removes a class exactly: x must hold the n×d features of the
// samples the class was learned from (in any order). Their codes are
// subtracted from the statistics (G -= HᵀH, S loses the class's row) and
// the classifier is re-solved with the current λ, so the model equals one
// that never saw the class, up to float32 rounding in G. The data is
// checked against the class's statistics (count, and S within
// ForgetMismatch); on any error the model is unchanged (an error after
// the codes were subtracted, in the re-solve, adds them back: G then
// equals its old value up to float32 rounding, everything else exactly).
//
// With x nil the data is not at hand: only the class's row of S and of
// the classifier go (the other classes' scores are unchanged, bit for
// bit), but G still holds its samples, so the model is not the same as
// one that never saw the class.
func (m *Model) Forget(ctx context.Context, label int, x []float32) (TaskRecord, error) {
	c, ok := m.index[label]
	if !ok {
		return TaskRecord{}, fmt.Errorf("flycl: forget: %w %q", ErrUnknownClass, m.className(label))
	}
	if x == nil {
		return m.dropClass(label)
	}
	n, err := m.checkInput(x)
	if err != nil {
		return TaskRecord{}, err
	}
	if n == 0 {
		return TaskRecord{}, fmt.Errorf("%w: forget %q: no samples given", ErrBadInput, m.className(label))
	}
	if c < len(m.counts) && m.counts[c] >= 0 && m.counts[c] != n {
		return TaskRecord{}, fmt.Errorf("%w: forget %q: the model learned %d samples of it, the data holds %d", ErrBadInput, m.className(label), m.counts[c], n)
	}
	if m.dual != nil {
		return m.forgetDual(ctx, label, c, x, n)
	}
	h, st, err := m.expand(ctx, x, nil)
	if err != nil {
		return TaskRecord{}, err
	}
	if rel := m.classMismatch(c, h, n, nil); rel > ForgetMismatch {
		return TaskRecord{}, fmt.Errorf("%w: forget %q: the data is not what the class learned (its statistics differ by %.2g, relative): give exactly the samples it was taught with", ErrBadInput, m.className(label), rel)
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = c
	}
	s := m.begin()
	s.st = st
	s.rec = TaskRecord{Samples: n, Removed: []int{label}, Lambda: m.lambdaWithout(label)}
	// With the factor of G + λI at hand for the λ the model keeps, the
	// samples come out of it by a rank-n downdate (guarded: one that would
	// lose definiteness or accuracy leaves the factor to a refactor).
	err = s.change(func() (ridge.FactorUpdate, error) {
		if m.acc.FactorLambda() == s.rec.Lambda && len(m.labels) > 1 {
			return m.acc.SubDowndating(h, n, idx, s.rec.Lambda)
		}
		return ridge.FactorUpdate{}, m.acc.Sub(h, n, idx)
	}, func() error { return m.acc.Add(h, n, idx) })
	if err != nil {
		return s.rollback(fmt.Errorf("flycl: forget: %w", err))
	}
	if err := m.removeClass(c); err != nil {
		return s.rollback(err)
	}
	return s.commit(m.solveGrid())
}

// lambdaWithout returns the λ a model that never saw label would have:
// that of the latest learning step with samples of another class (its
// GCV saw the same data unless the step mixed label with other classes;
// then the λ of the mixed task is kept). Steps from old files, which do
// not record their classes, count when they added a class other than
// label.
func (m *Model) lambdaWithout(label int) float64 {
	for i := len(m.hist) - 1; i >= 0; i-- {
		r := m.hist[i]
		if r.Removed != nil {
			continue
		}
		cls := r.Classes
		if cls == nil {
			cls = r.NewClasses
		}
		for _, c := range cls {
			if c != label {
				if r.RaisedFrom != 0 {
					return r.RaisedFrom // the λ chosen; solve raises it again if it must
				}
				return r.Lambda
			}
		}
	}
	return m.lambda
}

func distinctSorted(labels []int) []int {
	u := slices.Clone(labels)
	slices.Sort(u)
	return slices.Compact(u)
}

// dropClass removes a class without its data (Forget with x nil).
func (m *Model) dropClass(label int) (TaskRecord, error) {
	c, ok := m.index[label]
	if !ok {
		return TaskRecord{}, fmt.Errorf("flycl: drop: no class %q", m.className(label))
	}
	if err := m.removeClass(c); err != nil {
		return TaskRecord{}, err
	}
	if len(m.labels) == 0 {
		m.coef = nil
	} else {
		// a new slice: predictors share the old one (stateShared)
		m.coef = slices.Concat(m.coef[:c*m.cfg.M], m.coef[(c+1)*m.cfg.M:])
	}
	rec := TaskRecord{Removed: []int{label}, Lambda: m.lambda}
	m.record(rec)
	return rec, nil
}

// removeClass deletes class index c from S and the class map.
func (m *Model) removeClass(c int) error {
	if m.dual != nil {
		if err := m.dual.RemoveClass(c); err != nil {
			return fmt.Errorf("flycl: %w", err)
		}
		m.sol = nil
	} else if err := m.acc.RemoveClass(c); err != nil {
		return fmt.Errorf("flycl: %w", err)
	}
	label := m.labels[c]
	m.labels = slices.Delete(m.labels, c, c+1)
	if c < len(m.counts) {
		m.counts = slices.Delete(m.counts, c, c+1)
	}
	delete(m.names, label)
	m.index = make(map[int]int, len(m.labels))
	for i, l := range m.labels {
		m.index[l] = i
	}
	if len(m.labels) == 0 {
		m.coef = nil
	}
	return nil
}

// classMismatch returns the relative difference between class index c's
// row of S and the sum of the codes h (n×m) of the samples that are c's
// (all of them when idx is nil, else those with idx[i] == c), against the
// sum of their absolute values: about n·2⁻²⁴ when the samples are exactly
// what the class learned (ForgetMismatch).
func (m *Model) classMismatch(c int, h []float32, n int, idx []int) float64 {
	mm := m.cfg.M
	sum, abs := make([]float64, mm), make([]float64, mm)
	for i := 0; i < n; i++ {
		if idx != nil && idx[i] != c {
			continue
		}
		for j, v := range h[i*mm : (i+1)*mm] {
			sum[j] += float64(v)
			abs[j] += math.Abs(float64(v))
		}
	}
	row := m.classSums()[c*mm : (c+1)*mm]
	var diff, scale float64
	for j := range sum {
		d := float64(row[j]) - sum[j]
		diff += d * d
		scale += abs[j] * abs[j]
	}
	return math.Sqrt(diff / max(scale, math.SmallestNonzeroFloat64))
}
