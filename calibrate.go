package flycl

import (
	"context"
	"fmt"
	"slices"

	"github.com/flycl/flycl/reject"
)

// SetCalibration turns the calibration of the rejection threshold and of
// the probabilities' temperature on (c not nil; zero fields take their
// defaults) or off (nil; the current rejection stays). With it on, every
// Learn of samples ends by
// computing the exact leave-one-out class scores of (up to MaxSamples of)
// its samples under the new classifier. Their open-set scores join a pool
// of the most recent ones (newest first, at most MaxSamples: earlier
// learns' scores were computed under the classifier of their time; for
// ScoreTopCosine, (top score, leave-one-out cosine) pairs, whose means
// and standard deviations standardize the fused value), and the
// threshold is the split-conformal one of the pool (KeepThreshold): new
// samples of the learned classes that are exchangeable with the pooled
// ones are kept with probability Rejection.Guaranteed ≥ Keep, or n/(n+1)
// when the pool of n is too small for Keep. Rejection is on from the
// first learn that has a sample of a class with at least two samples:
// the leave-one-out score of a class's only sample is that of a class the
// model has never seen, so such samples stay out of the pool and of the
// temperature fit. The temperature maximises the likelihood of the
// learn's leave-one-out scores, extrapolated toward those of a new sample
// of the class (jackknifeExtrapolate: a leave-one-out score comes from a
// model of one sample of the class fewer, and probabilities fitted on it
// are underconfident with a few samples per class), or, when they are all
// answered right, gives them a mean top-class probability of (N+1)/(N+2);
// it is bounded below (FitTemperature; a learn of one class keeps the
// previous one); the threshold is taken from the exact leave-one-out
// scores (ExtrapolateThreshold takes it from the extrapolated ones). A learn
// from statistics alone (LearnOptions.Stats) has no samples: it turns rejection
// off and empties the pool. Forgetting keeps the last calibration.
func (m *Model) SetCalibration(c *reject.Calibration) error {
	if c == nil {
		m.calib = nil
		return nil
	}
	v := c.WithDefaults()
	if err := v.Validate(); err != nil {
		return err
	}
	m.calib = &v
	return nil
}

// Rejection returns the model's current rejection (zero: off).
func (m *Model) Rejection() reject.Rule { return m.rej }

// SetRejection replaces the model's rejection (for a threshold set by
// hand; see reject.ParseRule). It counts as a change of the model.
func (m *Model) SetRejection(r reject.Rule) error {
	if err := r.Validate(); err != nil {
		return err
	}
	m.rej = r
	m.version++
	return nil
}

// leaveOneOut returns the exact leave-one-out class scores (rows of
// Classes() columns) and the class index of each sample, of the samples
// the last calibration used (nil before any).
func (m *Model) leaveOneOut() (scores []float32, classes []int) {
	if len(m.loo) != len(m.looIdx)*len(m.labels) { // a class was forgotten since
		return nil, nil
	}
	return slices.Clone(m.loo), slices.Clone(m.looIdx)
}

// calibrate runs the calibration of SetCalibration after a learn whose n
// codes h (n×m, as learned) had class indices idx. It uses the
// accumulator's Cholesky factor of G + λI from the solve that just ended
// (ridge.Accumulator.FactorLambda). A failure leaves the rejection off
// rather than stale.
//
// In the dual form rows are the rows of the dual form holding the codes
// (nil in the primal form), and the leverages and cross terms are the
// hat matrix's entries (ridge.Solution.Hat).
func (m *Model) calibrateRows(ctx context.Context, h []float32, n int, idx []int, rows []int) {
	if m.calib == nil {
		return
	}
	c := *m.calib
	prevT := m.rej.Temperature
	// the pool holds one value per sample, or (top, cosine) pairs for a
	// score that needs the cosine: Samples tells which it holds while
	// rejection is off
	per := c.Score.PoolStride()
	if m.rej.Score != "" && m.rej.Score != c.Score || len(m.pool) != per*m.rej.Samples {
		m.pool = nil // scores of another kind
	}
	m.rej, m.loo, m.looIdx = reject.Rule{}, nil, nil
	if m.dual == nil && m.acc.FactorLambda() != m.lambda { // no factor of G + λI at hand: nothing exact to compute
		m.pool = nil
		return
	}
	sel := reject.CalibrationSamples(n, c.MaxSamples)
	loo, full, lev, err := m.looScores(ctx, h, sel, idx, rows)
	if err != nil {
		m.pool = nil
		return
	}
	nc := len(m.labels)
	cls := make([]int, len(sel))
	for i, s := range sel {
		cls[i] = idx[s]
	}
	// the rows of samples whose class has at least two: a class's only
	// sample left out leaves the class unlearned, and its leave-one-out
	// score is that of an unknown class (its cosine has no class sum
	// left). Those rows stay in leaveOneOut but out of the calibration.
	counts := m.Classes().Counts()
	var use []int
	for i, c := range cls {
		if c >= len(counts) || counts[c] < 0 || counts[c] >= 2 {
			use = append(use, i)
		}
	}
	// the temperature is fitted on the leave-one-out rows extrapolated
	// toward a new sample's (jackknifeExtrapolate); the threshold is taken
	// from the exact ones (or the extrapolated ones, ExtrapolateThreshold)
	sums := m.classSums()
	cos := reject.LeaveOneOutCosines(sums, nc, m.cfg.M, h, sel, idx)
	ext, extCos, err := reject.Jackknife(ctx, loo, full, lev, cos, nc, m.cfg.M, h, sel, idx, sums, counts, func(pj []int) []float64 {
		return m.hatColumns(h, sel, pj, rows)
	})
	if err != nil {
		m.pool = nil
		return
	}
	if firstNonFinite(ext) >= 0 { // a near-singular pair: keep the exact rows
		ext, extCos = loo, cos
	}
	cal := loo
	if c.ExtrapolateThreshold {
		cal, cos = ext, extCos
	}
	ul, uc := make([]float32, 0, len(use)*nc), make([]int, len(use))
	for j, i := range use {
		ul, uc[j] = append(ul, ext[i*nc:(i+1)*nc]...), cls[i]
	}
	temp := reject.FitTemperature(ul, nc, uc)
	if temp == 0 {
		temp = prevT
	}
	vals := make([]float32, per*len(use))
	if per == 2 {
		for j, i := range use {
			vals[2*j], vals[2*j+1] = float32(reject.ScoreTop.Value(cal[i*nc:(i+1)*nc], 0)), float32(cos[i])
		}
	} else {
		for j, i := range use {
			vals[j] = float32(c.Score.Value(cal[i*nc:(i+1)*nc], temp))
		}
	}
	m.pool = append(vals, m.pool...)[:min(len(vals)+len(m.pool), per*c.MaxSamples)]
	m.loo, m.looIdx = loo, cls
	m.rej = reject.FromPool(c, m.pool, temp)
}

// calibrationPool returns the pool of recent leave-one-out open-set
// scores the threshold was taken from (newest first; see SetCalibration).
func (m *Model) calibrationPool() []float32 { return slices.Clone(m.pool) }

// restoreCalibration puts back a calibration the model had before: the
// rejection r and the pool of leave-one-out scores it was taken from, as
// Rejection and calibrationPool returned them then. An undo calls it
// after Unlearn, with the calibration from before the learn it takes
// back, so that the model rejects and calibrates its probabilities
// exactly as that version did (Unlearn alone keeps the newer ones). It is
// part of that change: it does not count as one (the version stays). The
// leave-one-out scores of the last calibration (leaveOneOut) are not
// restored: they are forgotten, as by a model loaded from its file.
//
// A rejection that does not validate, or a pool that is longer than
// reject.MaxCalibrationPool or holds a value that is not finite, is refused
// with the model unchanged.
func (m *Model) restoreCalibration(r reject.Rule, pool []float32) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if len(pool) > reject.MaxCalibrationPool {
		return fmt.Errorf("flycl: calibration pool of %d scores, more than %d", len(pool), reject.MaxCalibrationPool)
	}
	if i := firstNonFinite(pool); i >= 0 {
		return fmt.Errorf("flycl: calibration pool score %d is %v", i, pool[i])
	}
	m.rej, m.pool, m.loo, m.looIdx = r, slices.Clone(pool), nil, nil
	return nil
}

// looScores returns the exact leave-one-out class scores of the rows sel
// of the codes h, learned with class indices idx: the scores each would
// get from the classifier solved without it. For a sample with code h,
// one-hot target y, scores f = C h and leverage a = hᵀ(G + λI)⁻¹h, removing
// it from G and S (a rank-one change, Sherman-Morrison) gives the scores
// (f − a·y)/(1 − a): exact for any sample in the statistics, whatever
// task it came with, since C is the solution over all of them.
// It also returns the full model's class scores of the rows sel and
// their leverages a.
//
// In the dual form rows[s] is the row of the dual form holding h's row s,
// and the leverages are the hat matrix's diagonal.
func (m *Model) looScores(ctx context.Context, h []float32, sel []int, idx []int, rows []int) (loo, full []float32, levs []float64, err error) {
	mm, nc, k := m.cfg.M, len(m.labels), len(sel)
	if m.dual != nil {
		return m.looScoresDual(ctx, sel, rows)
	}
	hs := make([]float32, k*mm)
	for i, s := range sel {
		copy(hs[i*mm:(i+1)*mm], h[s*mm:(s+1)*mm])
	}
	// The leverages of a learn that kept the factor come with its
	// low-rank change (ridge.Accumulator.Leverages); otherwise two
	// triangular solves per sample give them.
	var z []float32
	lev := m.acc.Leverages()
	if len(lev) != len(h)/mm {
		lev = nil
		z = slices.Clone(hs)
		m.acc.SolveRows(z, k)
	}
	out := make([]float32, k*nc)
	scoreRows(hs, k, mm, m.coef, nc, out)
	full = slices.Clone(out)
	levs = make([]float64, k)
	for i, s := range sel {
		a := 0.0
		if lev != nil {
			a = lev[s]
		} else {
			hr, zr := hs[i*mm:(i+1)*mm], z[i*mm:(i+1)*mm]
			for j, v := range hr {
				a += float64(v) * float64(zr[j])
			}
		}
		if !(a >= 0 && a < 1) {
			return nil, nil, nil, fmt.Errorf("flycl: leverage %g of sample %d is outside [0, 1)", a, s)
		}
		levs[i] = a
		row := out[i*nc : (i+1)*nc]
		for j := range row {
			f := float64(row[j])
			if j == idx[s] {
				f -= a
			}
			row[j] = float32(f / (1 - a))
		}
	}
	if i := firstNonFinite(out); i >= 0 {
		return nil, nil, nil, fmt.Errorf("flycl: leave-one-out score %d is %v", i, out[i])
	}
	return out, full, levs, ctx.Err()
}

// looScoresDual is looScores in the dual form: the fitted and the exact
// leave-one-out scores, and the leverages, of the rows holding the codes,
// by the dual's closed forms in float64 (ridge.Solution.LeaveOneOut).
// They are what the primal form's formula gives in exact arithmetic; the
// formula's (f − a·y)/(1 − a) from float32 scores f loses most of its
// digits where the leverage a nears 1 (λ small: a few photos per class),
// as much as the scores' last bits are amplified by 1/(1 − a).
func (m *Model) looScoresDual(ctx context.Context, sel, rows []int) (loo, full []float32, levs []float64, err error) {
	sol, err := m.solution(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	rs := make([]int, len(sel))
	for i, s := range sel {
		rs[i] = rows[s]
	}
	fitted, l, lev := sol.LeaveOneOut(rs)
	nc := len(m.labels)
	if len(fitted) != len(sel)*nc {
		return nil, nil, nil, fmt.Errorf("flycl: the dual form has %d classes, the model %d", len(fitted)/max(1, len(sel)), nc)
	}
	for i, a := range lev {
		if !(a >= 0 && a < 1) {
			return nil, nil, nil, fmt.Errorf("flycl: leverage %g of sample %d is outside [0, 1)", a, sel[i])
		}
	}
	loo, full = make([]float32, len(l)), make([]float32, len(fitted))
	for i := range l {
		loo[i], full[i] = float32(l[i]), float32(fitted[i])
	}
	if i := firstNonFinite(loo); i >= 0 {
		return nil, nil, nil, fmt.Errorf("flycl: leave-one-out score %d is %v", i, loo[i])
	}
	return loo, full, lev, ctx.Err()
}

// hatColumns returns hᵢᵀ(G+λI)⁻¹hⱼ for the rows i of sel and the rows
// pj (indices into sel) of the codes h: len(sel)×len(pj), two triangular
// solves per column.
//
// In the dual form (rows not nil) they are the hat matrix's entries of the
// rows holding the codes.
func (m *Model) hatColumns(h []float32, sel, pj []int, rows []int) []float64 {
	mm, k, np := m.cfg.M, len(sel), len(pj)
	if rows != nil {
		sol, err := m.solution(context.Background())
		if err != nil {
			return nil
		}
		ri, rj := make([]int, k), make([]int, np)
		for i, s := range sel {
			ri[i] = rows[s]
		}
		for q, j := range pj {
			rj[q] = rows[sel[j]]
		}
		return sol.Hat(ri, rj)
	}
	z := make([]float32, np*mm)
	for q, j := range pj {
		copy(z[q*mm:(q+1)*mm], h[sel[j]*mm:(sel[j]+1)*mm])
	}
	m.acc.SolveRows(z, np)
	out := make([]float64, k*np)
	for i, s := range sel {
		hi := h[s*mm : (s+1)*mm]
		for q := range np {
			zq := z[q*mm : (q+1)*mm]
			d := 0.0
			for t, v := range hi {
				d += float64(v) * float64(zq[t])
			}
			out[i*np+q] = d
		}
	}
	return out
}

// uncalibrate turns rejection off after a change that leaves no samples
// to calibrate on.
func (m *Model) uncalibrate() { m.rej, m.loo, m.looIdx, m.pool = reject.Rule{}, nil, nil, nil }
