package flycl

import (
	"context"
	"fmt"

	"github.com/flycl/flycl/reject"
)

// LeaveOneOutScores returns the exact leave-one-out class scores (rows
// of Classes() columns) of the n×d samples x, learned by the model with
// labels, and their leave-one-out cosines to the class sums
// (reject.LeaveOneOutCosines): the scores each sample would get from the
// classifier solved without it, by the formula of the rejection's
// calibration (a rank-one change of G + λI, as for the calibration).
//
// The samples must be among those the model's statistics hold (a
// journal's learns, less what was forgotten or undone): for any other
// input the result means nothing. It factors G + λI when the model has
// no factor at its λ (kept for the next learn), so, like a learn, it must
// not run concurrently with the model's other methods.
func (m *Model) LeaveOneOutScores(ctx context.Context, x []float32, labels []int) (scores []float32, cos []float64, err error) {
	n, err := m.checkInput(x)
	if err != nil {
		return nil, nil, err
	}
	if len(labels) != n {
		return nil, nil, fmt.Errorf("flycl: %d labels for %d samples", len(labels), n)
	}
	if len(m.labels) == 0 || m.coef == nil {
		return nil, nil, ErrNotTrained
	}
	idx := make([]int, n)
	for i, l := range labels {
		c, ok := m.index[l]
		if !ok {
			return nil, nil, fmt.Errorf("%w: label %d", ErrUnknownClass, l)
		}
		idx[i] = c
	}
	mm := m.cfg.M
	if m.dual != nil {
		// the samples' rows of the dual form: their leverages are the hat
		// matrix's diagonal
		h, _, err := m.expandExact(ctx, x)
		if err != nil {
			return nil, nil, err
		}
		rows, err := m.dualRows(h, n, idx, "leave-one-out scores")
		if err != nil {
			return nil, nil, err
		}
		sel := make([]int, n)
		for i := range sel {
			sel[i] = i
		}
		scores, _, _, err = m.looScores(ctx, h, sel, idx, rows)
		if err != nil {
			return nil, nil, err
		}
		return scores, reject.LeaveOneOutCosines(m.classSums(), len(m.labels), mm, h, sel, idx), nil
	}
	if m.acc.FactorLambda() != m.lambda {
		if err := m.acc.Factor(ctx, m.lambda); err != nil {
			return nil, nil, err
		}
	}
	h, err := m.expandCodes(ctx, x)
	if err != nil {
		return nil, nil, err
	}
	if len(m.acc.Leverages()) == n {
		// looScores takes the last learn's leverages when h has as many
		// rows as it had: a row more makes it solve for these samples'
		h = append(h, make([]float32, mm)...)
	}
	sel := make([]int, n)
	for i := range sel {
		sel[i] = i
	}
	scores, _, _, err = m.looScores(ctx, h, sel, idx, nil)
	if err != nil {
		return nil, nil, err
	}
	return scores, reject.LeaveOneOutCosines(m.acc.S(), len(m.labels), mm, h, sel, idx), nil
}
