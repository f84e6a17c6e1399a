package flycl

import (
	"context"
	"fmt"
	"slices"

	"github.com/flycl/flycl/projection"

	"github.com/flycl/flycl/ridge"
)

// The dual form. A model whose Config.Dual is positive starts in it: it
// keeps the codes of the samples it learned (sparse, k non-zeros of m
// each) with their classes, and the n×n kernel K = HHᵀ in float64
// (ridge.Dual), instead of the m×m float32 G. Ridge has two exact forms,
//
//	W = (HᵀH + λI)⁻¹HᵀY = Hᵀ(HHᵀ + λI)⁻¹Y,
//
// and while n is below m the second is an n×n problem: K's
// eigendecomposition gives the solution at any λ, GCV at any λ in
// O(n·classes) (so a widened grid becomes the minimum over every λ > 0),
// the hat matrix whose entries are the leverages and cross terms the
// calibration's leave-one-out predictions take, and taking samples back
// out (Unlearn, Forget) drops their rows: the model then equals a fresh
// learn of the remaining samples to float64 rounding. Prediction goes
// through W = HᵀA (classes × m, formed once per change) exactly as in the
// primal form, so a Predictor does not know which form made it.
//
// A learn that takes the samples past Config.Dual switches the model to
// the primal form (toPrimal: G and S formed from the held codes) and the
// learn continues there as it always has; so does a learn from
// statistics (a merge, shards), which have no codes.

// Form returns "dual" or "primal" and why: the form a model is in.
func (m *Model) Form() (form, why string) { return m.state().Form() }

// Form returns "dual" or "primal" and why: the form the state's model is
// in (see Config.Dual).
func (st State) Form() (form, why string) {
	switch {
	case st.Dual != nil:
		return "dual", fmt.Sprintf("%d samples, at most %d (Config.Dual) before it switches to the primal form", st.Dual.Samples(), st.Config.Dual)
	case st.Config.Dual > 0:
		return "primal", fmt.Sprintf("switched from the dual form: more than %d samples, or statistics learned (a merge)", st.Config.Dual)
	}
	return "primal", "the paper's form (Config.Dual is 0)"
}

// LambdaLimit says where the last continuous GCV choice of a dual model
// fell in its range (ridge.BestContinuous): inside (""), at the
// interpolating limit or at the constant one.
func (m *Model) LambdaLimit() ridge.Limit { return m.limit }

// toPrimal switches a dual model to the primal form: G and S from the
// held codes, as one learn of them would give.
func (m *Model) toPrimal() error {
	if m.dual == nil {
		return nil
	}
	acc, err := m.dual.Accumulator()
	if err != nil {
		return fmt.Errorf("flycl: switch to the primal form: %w", err)
	}
	acc.GrowClasses(len(m.labels))
	m.acc, m.dual, m.sol, m.limit = acc, nil, nil, ""
	return nil
}

// classSums returns S (classes × m): the primal's, or the dual rows' sums
// (shared with the dual form: callers only read it).
func (m *Model) classSums() []float32 {
	if m.dual != nil {
		return m.dual.SharedS()
	}
	return m.acc.S()
}

// gramDiag returns G's diagonal entry j, for either form.
func (m *Model) gramDiag() func(j int) float64 {
	if m.dual != nil {
		d := m.dual.GramDiag()
		return func(j int) float64 { return d[j] }
	}
	return func(j int) float64 { return float64(m.acc.G(j, j)) }
}

// solution returns the dual solution at the model's λ.
func (m *Model) solution(ctx context.Context) (*ridge.Solution, error) {
	if m.sol == nil {
		s, err := m.dual.Solve(ctx, m.lambda)
		if err != nil {
			return nil, err
		}
		m.sol = s
	}
	return m.sol, nil
}

// solveDual is solve in the dual form: no λ needs raising (float64,
// K + λI positive definite for every λ > 0).
func (m *Model) solveDual(ctx context.Context, lambda float64) (float64, error) {
	sol, err := m.dual.Solve(ctx, lambda)
	if err != nil {
		return 0, fmt.Errorf("flycl: %w", err)
	}
	coef := sol.Coef()
	if i := firstNonFinite(coef); i >= 0 {
		return 0, errTooLarge(fmt.Sprintf("classifier value %d (class %d) came out %v with λ=%g", i, i/m.cfg.M, coef[i], lambda))
	}
	m.coef, m.lambda, m.sol = coef, lambda, sol
	return lambda, nil
}

// expandExact expands x as a learn does. A sample's code may differ in
// its last bits with the samples expanded with it (a BLAS kernel rounds
// by blocks); an undo or a forget finds the row that holds it as the
// nearest of its class (ridge.Dual.Find, within dualMatch), and drops
// that row itself.
func (m *Model) expandExact(ctx context.Context, x []float32) ([]float32, Stages, error) {
	return m.expand(ctx, x, nil)
}

// learnDual is learn in the dual form: the rows join K, GCV scores λ on
// K's spectrum (the task's rows, or all with GCVAll), and the solve is
// that of the dual.
func (m *Model) learnDual(ctx context.Context, x []float32, labels []int, n int, lambda float64) (TaskRecord, error) {
	s := m.begin()
	if m.cfg.LambdaScale == LambdaRelative && m.inScale == 0 {
		m.inScale = inputScaleFor(x)
	}
	h, st, err := m.expandExact(ctx, x)
	if err != nil {
		return s.rollback(err)
	}
	if err := m.checkCodes(h, n); err != nil {
		return s.rollback(err)
	}
	s.st = st
	idx, fresh := m.classIndices(labels)
	s.rec = TaskRecord{Samples: n, NewClasses: fresh, Classes: distinctSorted(labels), Lambda: lambda}
	base := m.dual.Samples()
	if err := s.change(func() (ridge.FactorUpdate, error) { return ridge.FactorUpdate{}, m.dual.Add(h, n, idx) }, nil); err != nil {
		return s.rollback(fmt.Errorf("flycl: %w", err))
	}
	m.dual.GrowClasses(len(m.labels))
	rows := make([]int, n)
	for i := range rows {
		rows[i] = base + i
	}
	if lambda == 0 {
		if err := m.chooseDual(ctx, s, h, n, idx, rows); err != nil {
			return s.rollback(err)
		}
	}
	m.addCounts(idx, nil)
	rec, err := s.commit(nil)
	if err == nil {
		m.calibrateRows(ctx, h, n, idx, rows)
	}
	return rec, err
}

// chooseDual chooses λ by GCV on K's spectrum: the task's rows (GCVTask)
// or all rows (GCVAll); with WidenGrid the minimum over every λ > 0
// (ridge.Spectrum.BestContinuous), else the best of the grid as the
// primal chooses it (Config.Lambdas, scaled with LambdaRelative).
func (m *Model) chooseDual(ctx context.Context, s *step, h []float32, n int, idx, rows []int) error {
	var sp *ridge.Spectrum
	var err error
	if m.cfg.GCVScope == GCVAll {
		sp, err = m.dual.Spectrum()
	} else {
		local, nc := localIndices(idx)
		sp, err = m.dual.SpectrumOf(rows, local, nc)
	}
	if err != nil {
		return fmt.Errorf("flycl: %w", err)
	}
	s.rec.GCVScope = m.cfg.GCVScope
	if m.cfg.WidenGrid {
		l, limit, scan, scores := sp.BestContinuous()
		s.rec.Lambda, s.rec.Grid, s.rec.GCV, s.rec.Continuous, s.rec.Limit = l, scan, scores, true, limit
		m.limit = limit
		return ctx.Err()
	}
	grid := m.grid(h, n)
	scores, err := sp.Scores(ctx, grid)
	if err != nil {
		return fmt.Errorf("flycl: %w", err)
	}
	s.rec.Lambda, s.rec.Grid, s.rec.GCV = grid[ridge.BestLambda(scores)], grid, scores
	m.limit = ""
	return nil
}

// dualRows returns the rows of the dual form holding the n codes h with
// class indices idx (ridge.Dual.Find), or an input error.
func (m *Model) dualRows(h []float32, n int, idx []int, what string) ([]int, error) {
	rows, ok := m.dual.Find(h, n, idx, dualMatch)
	if !ok {
		return nil, fmt.Errorf("%w: %s: the samples are not what the model learned (a code has no stored sample of its class within %g, relative)", ErrBadInput, what, dualMatch)
	}
	return rows, nil
}

// dualMatch is how near, relative, a code must be to a stored one to be
// that sample: the same features expanded with other samples differ in
// their last bits, or, where rounding swaps the k-th and (k+1)-th
// coordinates, by about √2 times the k-th largest value (a few percent
// of the code's norm for k = 3000); two different photos differ by tens
// of percent, and the nearest row is taken, so a near-duplicate photo
// does not take the place of the sample itself.
const dualMatch = 0.1

// forgetDual is Forget in the dual form: the class's rows go (found by
// their codes, every one of them), and the classifier is re-solved.
func (m *Model) forgetDual(ctx context.Context, label, c int, x []float32, n int) (TaskRecord, error) {
	h, st, err := m.expandExact(ctx, x)
	if err != nil {
		return TaskRecord{}, err
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = c
	}
	rows, err := m.dualRows(h, n, idx, fmt.Sprintf("forget %q", m.className(label)))
	if err != nil {
		return TaskRecord{}, err
	}
	held := 0
	for i := range m.dual.Samples() {
		if _, _, k := m.dual.Row(i); k == c {
			held++
		}
	}
	if held != n {
		return TaskRecord{}, fmt.Errorf("%w: forget %q: the model holds %d samples of it, the data %d", ErrBadInput, m.className(label), held, n)
	}
	s := m.begin()
	s.st = st
	s.rec = TaskRecord{Samples: n, Removed: []int{label}, Lambda: m.lambdaWithout(label)}
	if err := s.change(func() (ridge.FactorUpdate, error) { return ridge.FactorUpdate{}, m.dual.Remove(rows) }, nil); err != nil {
		return s.rollback(fmt.Errorf("flycl: forget: %w", err))
	}
	if err := m.removeClass(c); err != nil {
		return s.rollback(err)
	}
	return s.commit(nil)
}

// unlearnDual is Unlearn in the dual form: the samples' rows go (found by
// their codes), emptied classes with them, and the classifier is
// re-solved with lambda.
func (m *Model) unlearnDual(ctx context.Context, x []float32, n int, idx []int, per map[int]int, emptied []int, lambda float64) (TaskRecord, error) {
	h, st, err := m.expandExact(ctx, x)
	if err != nil {
		return TaskRecord{}, err
	}
	rows, err := m.dualRows(h, n, idx, "unlearn")
	if err != nil {
		return TaskRecord{}, err
	}
	s := m.begin()
	s.st, s.rec = st, TaskRecord{Samples: n, Lambda: lambda}
	if err := s.change(func() (ridge.FactorUpdate, error) { return ridge.FactorUpdate{}, m.dual.Remove(rows) }, nil); err != nil {
		return s.rollback(fmt.Errorf("flycl: unlearn: %w", err))
	}
	return m.finishUnlearn(s, per, emptied)
}

// checkDualParts is checkParts for a snapshot in the dual form: the
// state, the dual form against it, S of the rows' classes and the sample
// count of the rows.
func checkDualParts(st *State, w *projection.Matrix, s []float32, samples int) error {
	if err := st.validate(w); err != nil {
		return err
	}
	if err := checkDual(st); err != nil {
		return err
	}
	if nc := len(st.Labels); len(s) != nc*st.Config.M {
		return fmt.Errorf("flycl: S has %d values, want %d classes × %d", len(s), nc, st.Config.M)
	}
	if samples != st.Dual.Samples() {
		return fmt.Errorf("flycl: %d samples, the dual form holds %d", samples, st.Dual.Samples())
	}
	if len(st.Labels) > 0 && samples == 0 {
		return fmt.Errorf("flycl: %d classes learned from no samples", len(st.Labels))
	}
	return nil
}

// appendDualLowerRow appends G[i][0..i] of the dual form's rows, in
// float32 (summed in float64), to dst: what the primal G would hold, for
// readers of a snapshot's G (comparisons, a merge's check). It costs a
// pass over the rows per call.
func appendDualLowerRow(dst []float32, d *ridge.Dual, i int) []float32 {
	row := make([]float64, i+1)
	for r := range d.Samples() {
		cols, vals, _ := d.Row(r)
		p, ok := slices.BinarySearch(cols, int32(i))
		if !ok {
			continue
		}
		v := float64(vals[p])
		for t, c := range cols[:p+1] {
			row[c] += v * float64(vals[t])
		}
	}
	for _, v := range row {
		dst = append(dst, float32(v))
	}
	return dst
}

// DualLimit is the number of samples up to which a learn in the dual form
// costs less than one in the primal form at expansion dimension m: a new
// model from images (deploy.DefaultImageConfig) stays dual up to it. The
// dual learn's cost grows with n²·k (K's new rows, W = HᵀA) and n³/3 (the
// Cholesky factor of K + λI), the primal's with m³ (G + λI factored when
// GCV moves λ) whatever n, so the crossover grows with m; measured by
// flycl bench dual (docs/PERFORMANCE.md, "The dual form") on 2 cores:
// CPU time of a learn of 10 samples, dual 0.10 s at n = 1600 against
// primal 0.14 s at m = 3000, dual 0.28 s at n = 1600 against primal 4.2 s
// at m = 10000. m/4 stays below both crossovers; its memory, 8 bytes per
// non-zero of the codes and 16·n² for K and the factor of K + λI, is then
// 160 MB at m = 10000 against G's 381 MiB.
func DualLimit(m int) int { return max(1, m/4) }
