package ridge

import (
	"context"
	"fmt"
	"slices"

	"github.com/flycl/flycl/internal/parallel"
	"github.com/flycl/flycl/linalg"
)

// Accumulator holds the streaming statistics of a ridge classifier over
// m-dimensional inputs and a growing set of classes.
//
// Memory: one m×m float32 matrix. G lives in its strict lower triangle
// plus a separate diagonal; the upper triangle and diagonal are the
// workspace of the Cholesky factor, so solving never copies G.
type Accumulator struct {
	m    int
	buf  []float32 // m*m
	diag []float32 // diagonal of G
	s    []float32 // classes × m: row c is Σ of the inputs labelled c
	nc   int
	n    int // samples seen
	// fac is the λ of the Cholesky factor of G + λI in the workspace, 0
	// when it holds none for the current G (see FactorLambda); updates
	// counts the rank-n updates applied to it since it was computed.
	fac     float64
	updates int
	limit   int // SetUpdateLimit's n + 1 (0: the default)
	// lr is the change of G since the factor was computed, kept as a
	// low-rank term (lowrank.go); meaningful only while fac > 0.
	lr lowRank
}

// NewAccumulator returns empty statistics for m-dimensional inputs.
func NewAccumulator(m int) (*Accumulator, error) {
	if m <= 0 {
		return nil, fmt.Errorf("ridge: dimension must be positive, got %d", m)
	}
	a := &Accumulator{m: m, buf: make([]float32, m*m), diag: make([]float32, m)}
	prefault(a.buf)
	return a, nil
}

// prefault touches every page of s, so the operating system maps the
// memory now rather than in the middle of the first task's BLAS calls.
func prefault(s []float32) {
	const page = 1024 // floats per 4 KiB page
	parallel.For((len(s)+page-1)/page, func(lo, hi int) {
		for p := lo; p < hi; p++ {
			s[p*page] = 0
		}
	})
}

// Dim returns m.
func (a *Accumulator) Dim() int { return a.m }

// Classes returns the number of classes (rows of S).
func (a *Accumulator) Classes() int { return a.nc }

// Samples returns the number of samples accumulated.
func (a *Accumulator) Samples() int { return a.n }

// Add accumulates the n×m row-major inputs h whose class indices are
// labels (0 <= label; new indices grow S with zero rows). It updates
// G += hᵀh with one symmetric rank-n update and S += hᵀY.
func (a *Accumulator) Add(h []float32, n int, labels []int) error {
	if err := a.checkAdd(h, n, labels); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	a.fac = 0
	AddGram(a.buf, a.diag, h, n, a.m)
	a.addS(h, n, labels)
	return nil
}

// checkAdd validates the inputs of Add and makes room for their classes.
func (a *Accumulator) checkAdd(h []float32, n int, labels []int) error {
	if len(h) != n*a.m {
		return fmt.Errorf("ridge: input has %d values, want %d×%d", len(h), n, a.m)
	}
	if len(labels) != n {
		return fmt.Errorf("ridge: %d labels for %d samples", len(labels), n)
	}
	for i, l := range labels {
		if l < 0 {
			return fmt.Errorf("ridge: sample %d: negative class index %d", i, l)
		}
	}
	for _, l := range labels {
		if l >= a.nc {
			a.GrowClasses(l + 1)
		}
	}
	return nil
}

// addS adds the codes to S and counts them (the part of Add after G).
func (a *Accumulator) addS(h []float32, n int, labels []int) {
	m := a.m
	for i, l := range labels {
		row := a.s[l*m : (l+1)*m]
		for j, v := range h[i*m : (i+1)*m] {
			row[j] += v
		}
	}
	a.n += n
}

// GrowClasses makes room for nc classes (no-op if there already are).
func (a *Accumulator) GrowClasses(nc int) {
	if nc <= a.nc {
		return
	}
	a.s = append(a.s, make([]float32, (nc-a.nc)*a.m)...)
	a.nc = nc
}

// Solve returns C (classes × m, row c = weights of class c) with
// (G + λI) Cᵀ = S, by a Cholesky factorisation of G + λI.
func (a *Accumulator) Solve(ctx context.Context, lambda float64) ([]float32, error) {
	if err := a.Factor(ctx, lambda); err != nil {
		return nil, err
	}
	c := append([]float32(nil), a.s...)
	linalg.Spotrs(a.m, a.nc, a.buf, a.m, c, a.m)
	return c, ctx.Err()
}

// Factor writes the Cholesky factor of G + λI into the workspace; SolveRows
// then applies it. Solve is Factor followed by SolveRows(S). On success
// FactorLambda returns lambda until G changes (other than through
// AddUpdating or SubDowndating, which keep the factor).
func (a *Accumulator) Factor(ctx context.Context, lambda float64) error {
	if !(lambda > 0) {
		return fmt.Errorf("ridge: lambda must be positive, got %g", lambda)
	}
	m := a.m
	a.InvalidateFactor()
	mirrorLower(a.buf, m)
	for i := 0; i < m; i++ {
		a.buf[i*m+i] = float32(float64(a.diag[i]) + lambda)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := linalg.Spotrf(m, a.buf, m); err != nil {
		return fmt.Errorf("ridge: factor G + %g I: %w", lambda, err)
	}
	a.fac = lambda
	return nil
}

// SolveRows overwrites each of the nrhs rows of b (nrhs×m) with the
// solution x of (G + λI) x = row, using the last Factor and the changes
// AddUpdating and SubDowndating kept since (lowrank.go). With such changes
// the solve is the Woodbury identity's followed by one step of iterative
// refinement (a residual with G, a second solve): the identity loses
// accuracy by cancellation for right-hand sides in directions the factor's
// A₀ knew only through λ (new classes at a small λ), and one step of
// refinement in the working precision makes a solver that is not too
// unstable backward stable again (Skeel, Math. Comp. 35, 1980).
func (a *Accumulator) SolveRows(b []float32, nrhs int) {
	if a.fac == 0 || a.lr.rows() == 0 {
		a.solve0(b, nrhs)
		return
	}
	rhs := slices.Clone(b)
	a.woodbury(b, nrhs)
	r := a.residualRows(rhs, b, nrhs)
	a.woodbury(r, nrhs)
	for i, v := range r {
		b[i] += v
	}
}

// woodbury overwrites the nrhs rows of b with A⁻¹·row by the factor and
// the low-rank term, without refinement.
func (a *Accumulator) woodbury(b []float32, nrhs int) {
	zx := a.lr.products(b, nrhs)
	a.solve0(b, nrhs)
	a.lr.correct(b, nrhs, zx)
}

// residualRows returns the rows of rhs − A·x (A = G + λI, λ = FactorLambda)
// in float32: one product with G's lower triangle (ssymm reads the
// workspace diagonal, which is the factor's; G's is put back after).
func (a *Accumulator) residualRows(rhs, x []float32, nrhs int) []float32 {
	m := a.m
	r := slices.Clone(rhs)
	linalg.SsymmLowerRight(nrhs, m, -1, a.buf, m, x, m, 1, r, m)
	for i := 0; i < m; i++ {
		d := float64(a.diag[i]) + a.fac - float64(a.buf[i*m+i])
		for k := 0; k < nrhs; k++ {
			r[k*m+i] = float32(float64(r[k*m+i]) - d*float64(x[k*m+i]))
		}
	}
	return r
}

// mirrorLower copies the strict lower triangle of the m×m row-major a
// into its strict upper triangle, in cache-friendly tiles.
func mirrorLower[T float32 | float64](a []T, m int) {
	const t = 64
	nb := (m + t - 1) / t
	parallel.For(nb, func(lo, hi int) {
		for bi := lo; bi < hi; bi++ { // tile row (upper triangle: bj >= bi)
			i0, i1 := bi*t, min(m, bi*t+t)
			for bj := bi; bj < nb; bj++ {
				j0, j1 := bj*t, min(m, bj*t+t)
				for i := i0; i < i1; i++ {
					for j := max(j0, i+1); j < j1; j++ {
						a[i*m+j] = a[j*m+i]
					}
				}
			}
		}
	})
}

// G returns element (i,j) of G (for tests and inspection).
func (a *Accumulator) G(i, j int) float32 {
	if i == j {
		return a.diag[i]
	}
	if j > i {
		i, j = j, i
	}
	return a.buf[i*a.m+j]
}

// LowerRow returns row i of G's lower triangle, G[i][0..i] inclusive, in
// a new slice.
func (a *Accumulator) LowerRow(i int) []float32 {
	r := make([]float32, i+1)
	copy(r, a.buf[i*a.m:i*a.m+i])
	r[i] = a.diag[i]
	return r
}

// AppendLowerRow appends row i of G's lower triangle, G[i][0..i]
// inclusive, to dst and returns it.
func (a *Accumulator) AppendLowerRow(dst []float32, i int) []float32 {
	dst = append(dst, a.buf[i*a.m:i*a.m+i]...)
	return append(dst, a.diag[i])
}

// SetLowerRow sets G[i][0..i] (and by symmetry column i) from row.
func (a *Accumulator) SetLowerRow(i int, row []float32) error {
	if i < 0 || i >= a.m || len(row) != i+1 {
		return fmt.Errorf("ridge: lower row %d needs %d values, got %d", i, i+1, len(row))
	}
	a.fac = 0
	copy(a.buf[i*a.m:i*a.m+i], row[:i])
	a.diag[i] = row[i]
	return nil
}

// S returns S (classes × m); the slice is shared, do not modify it.
func (a *Accumulator) S() []float32 { return a.s }

// SetS replaces S and the class count (nc × m values) and the sample count.
func (a *Accumulator) SetS(s []float32, nc, samples int) error {
	if len(s) != nc*a.m {
		return fmt.Errorf("ridge: S needs %d×%d values, got %d", nc, a.m, len(s))
	}
	a.s = append([]float32(nil), s...)
	a.nc = nc
	a.n = samples
	a.lr.last.ok = false
	return nil
}
