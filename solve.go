package flycl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/flycl/flycl/linalg"
)

// solve factors G + λI (unless the factor at hand is that of G + λI:
// kept by the step, see ridge.Accumulator.AddUpdating) and solves for
// C. In float32, G + λI of a
// rank-deficient G (fewer samples than m) with a tiny λ can fail to be
// numerically positive definite; then λ is raised to the next larger grid
// value, and beyond the grid by factors of 10, until the factorisation
// succeeds. It returns the λ used. On error (no λ factors, or the
// classifier comes out not finite) the classifier and λ are unchanged and
// the caller takes its step back out of the statistics.
func (m *Model) solve(ctx context.Context, lambda float64, grid []float64, st *Stages) (float64, error) {
	t := time.Now()
	if m.dual != nil {
		used, err := m.solveDual(ctx, lambda)
		st.Solve = time.Since(t)
		return used, err
	}
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
	// After a learn that kept the factor (ridge.Accumulator.AddUpdating),
	// the classifier moves by the learn's low-rank change alone
	// (UpdateSolution: no solve with the factor); otherwise, or when the
	// accumulator asks for a full solve, C = (G + λI)⁻¹S afresh.
	nc := m.acc.Classes()
	coef := make([]float32, nc*m.cfg.M)
	incremental := m.coef != nil && m.lambda == lambda && len(m.coef) <= len(coef)
	if incremental {
		copy(coef, m.coef) // the rows of classes this learn added stay 0
		incremental = m.acc.UpdateSolution(coef)
	}
	if !incremental {
		copy(coef, m.acc.S())
		m.acc.SolveRows(coef, nc)
	}
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
