package ridge

import (
	"fmt"
	"math"
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

// Clone returns an independent copy of the statistics (the Cholesky
// workspace is not copied: Factor again before SolveRows).
func (a *Accumulator) Clone() *Accumulator {
	b := &Accumulator{m: a.m, buf: make([]float32, a.m*a.m), diag: slices.Clone(a.diag), s: slices.Clone(a.s), nc: a.nc, n: a.n}
	for i := 0; i < a.m; i++ {
		copy(b.buf[i*a.m:i*a.m+i], a.buf[i*a.m:i*a.m+i])
	}
	return b
}

// Sub removes the n×m row-major inputs h with class indices labels from
// the statistics: G -= hᵀh (one symmetric rank-n update with α = -1) and
// S -= hᵀY, and the sample count drops by n. It is the exact inverse of
// Add up to float32 rounding (a diagonal entry that rounding would leave
// negative is set to 0); it does not check that h was added before.
func (a *Accumulator) Sub(h []float32, n int, labels []int) error {
	if len(h) != n*a.m {
		return fmt.Errorf("ridge: input has %d values, want %d×%d", len(h), n, a.m)
	}
	if len(labels) != n {
		return fmt.Errorf("ridge: %d labels for %d samples", len(labels), n)
	}
	if n > a.n {
		return fmt.Errorf("ridge: removing %d samples from statistics of %d", n, a.n)
	}
	for i, l := range labels {
		if l < 0 || l >= a.nc {
			return fmt.Errorf("ridge: sample %d: class index %d outside [0,%d)", i, l, a.nc)
		}
	}
	if n == 0 {
		return nil
	}
	m := a.m
	a.fac = 0
	for i := 0; i < m; i++ {
		a.buf[i*m+i] = a.diag[i]
	}
	linalg.SsyrkLower(true, m, n, -1, h, m, 1, a.buf, m)
	for i := 0; i < m; i++ {
		// A Gram diagonal is a sum of squares, never negative. Subtracting
		// the forgotten samples' squares in float32 can leave a coordinate
		// that only they used at a tiny negative value (rounding of order
		// u·Σh²); clamp it to the exact answer's sign, 0, so the
		// statistics stay a valid Gram matrix (snapshots refuse a negative
		// diagonal).
		a.diag[i] = max(a.buf[i*m+i], 0)
	}
	for i, l := range labels {
		row := a.s[l*m : (l+1)*m]
		for j, v := range h[i*m : (i+1)*m] {
			row[j] -= v
		}
	}
	a.n -= n
	return nil
}

// RemoveClass deletes row c of S; the classes after it move down one
// index. G is unchanged (remove the class's samples with Sub first to
// forget them from G as well).
func (a *Accumulator) RemoveClass(c int) error {
	if c < 0 || c >= a.nc {
		return fmt.Errorf("ridge: class index %d outside [0,%d)", c, a.nc)
	}
	a.s = slices.Delete(a.s, c*a.m, (c+1)*a.m)
	a.nc--
	a.lr.last.ok = false // its class indices no longer hold
	return nil
}

// PackedLower returns the lower triangle of G packed row by row (row i,
// G[i][0..i], starts at i(i+1)/2), m(m+1)/2 values, in a new slice.
func (a *Accumulator) PackedLower() []float32 {
	m := a.m
	out := make([]float32, m*(m+1)/2)
	for i := 0; i < m; i++ {
		o := i * (i + 1) / 2
		copy(out[o:o+i], a.buf[i*m:i*m+i])
		out[o+i] = a.diag[i]
	}
	return out
}

// SetPackedLower sets G from its packed lower triangle (see PackedLower).
func (a *Accumulator) SetPackedLower(g []float32) error {
	m := a.m
	if len(g) != m*(m+1)/2 {
		return fmt.Errorf("ridge: packed G needs %d values, got %d", m*(m+1)/2, len(g))
	}
	a.fac = 0
	for i := 0; i < m; i++ {
		o := i * (i + 1) / 2
		copy(a.buf[i*m:i*m+i], g[o:o+i])
		a.diag[i] = g[o+i]
	}
	return nil
}

// AddWithGram accumulates the n×m codes h with class indices labels like
// Add, but takes their Gram matrix hᵀh from the caller (strict lower
// triangle in lower, m×m row-major, diagonal in diag; as Workspace.
// TaskGram returns it) instead of computing it: G += hᵀh is then m² additions.
func (a *Accumulator) AddWithGram(h []float32, n int, labels []int, lower, diag []float32) error {
	m := a.m
	if len(lower) != m*m || len(diag) != m {
		return fmt.Errorf("ridge: Gram has %d+%d values, want %d×%d", len(lower), len(diag), m, m)
	}
	if err := a.checkAdd(h, n, labels); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	a.fac = 0
	row := func(i int) {
		g, t := a.buf[i*m:i*m+i], lower[i*m:i*m+i]
		for j, v := range t {
			g[j] += v
		}
		a.diag[i] += diag[i]
	}
	// rows i and m-1-i together: every pair is m-1 additions
	parallel.For((m+1)/2, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row(i)
			if j := m - 1 - i; j != i {
				row(j)
			}
		}
	})
	a.addS(h, n, labels)
	return nil
}

// AddStats adds the statistics s (a task, or merged shards of one) to the
// accumulator. classIndex maps each of s.Labels to the accumulator's class
// index (new indices grow S). G is added in float64 and rounded once per
// element: float32(G_acc + G_s).
func (a *Accumulator) AddStats(s *Stats, classIndex []int) error {
	if s.M != a.m {
		return fmt.Errorf("ridge: statistics have dimension %d, accumulator %d", s.M, a.m)
	}
	if err := s.Check(); err != nil {
		return err
	}
	if len(classIndex) != len(s.Labels) {
		return fmt.Errorf("ridge: %d class indices for %d labels", len(classIndex), len(s.Labels))
	}
	for _, c := range classIndex {
		if c < 0 {
			return fmt.Errorf("ridge: negative class index %d", c)
		}
	}
	// Check first, so that statistics float32 cannot hold (a merged file
	// may carry values beyond its range) leave the accumulator as it was.
	if err := a.statsFit(s, classIndex, 1); err != nil {
		return err
	}
	for _, c := range classIndex {
		if c >= a.nc {
			a.GrowClasses(c + 1)
		}
	}
	a.addStats(s, classIndex, 1)
	a.n += s.N
	return nil
}

// SubStats takes statistics added by AddStats (with the same classIndex)
// back out: G and S lose s in float64, rounded once per element, and the
// sample count drops by s.N. It is the inverse of AddStats up to float32
// rounding (a diagonal entry that rounding would leave negative is set to
// 0, as in Sub).
func (a *Accumulator) SubStats(s *Stats, classIndex []int) error {
	if s.M != a.m {
		return fmt.Errorf("ridge: statistics have dimension %d, accumulator %d", s.M, a.m)
	}
	if len(classIndex) != len(s.Labels) {
		return fmt.Errorf("ridge: %d class indices for %d labels", len(classIndex), len(s.Labels))
	}
	if s.N > a.n {
		return fmt.Errorf("ridge: removing %d samples from statistics of %d", s.N, a.n)
	}
	for _, c := range classIndex {
		if c < 0 || c >= a.nc {
			return fmt.Errorf("ridge: class index %d outside [0,%d)", c, a.nc)
		}
	}
	if err := a.statsFit(s, classIndex, -1); err != nil {
		return err
	}
	a.addStats(s, classIndex, -1)
	for i := range a.diag {
		a.diag[i] = max(a.diag[i], 0)
	}
	a.n -= s.N
	return nil
}

// statsFit checks that every element of G and S stays a finite float32
// when sign·s is added.
func (a *Accumulator) statsFit(s *Stats, classIndex []int, sign float64) error {
	m := a.m
	fits := func(v float64) bool { return !math.IsInf(float64(float32(v)), 0) && !math.IsNaN(v) }
	for i := 0; i < m; i++ {
		row := s.G[i*(i+1)/2 : i*(i+1)/2+i+1]
		dst := a.buf[i*m : i*m+i]
		for j, v := range row[:i] {
			if r := float64(dst[j]) + sign*v; !fits(r) {
				return fmt.Errorf("ridge: G[%d][%d] would be %g, beyond float32", i, j, r)
			}
		}
		if r := float64(a.diag[i]) + sign*row[i]; !fits(r) {
			return fmt.Errorf("ridge: G[%d][%d] would be %g, beyond float32", i, i, r)
		}
	}
	for r, c := range classIndex {
		if c >= a.nc {
			continue // a new class: S's row is s's
		}
		dst := a.s[c*m : (c+1)*m]
		for j, v := range s.S[r*m : (r+1)*m] {
			if x := float64(dst[j]) + sign*v; !fits(x) {
				return fmt.Errorf("ridge: S[%d][%d] would be %g, beyond float32", c, j, x)
			}
		}
	}
	for j, v := range s.S {
		if !fits(v) {
			return fmt.Errorf("ridge: S value %d (%g) is beyond float32", j, v)
		}
	}
	return nil
}

// addStats adds sign·s to G and S (checked by statsFit).
func (a *Accumulator) addStats(s *Stats, classIndex []int, sign float64) {
	m := a.m
	a.fac = 0
	for i := 0; i < m; i++ {
		row := s.G[i*(i+1)/2 : i*(i+1)/2+i+1]
		dst := a.buf[i*m : i*m+i]
		for j, v := range row[:i] {
			dst[j] = float32(float64(dst[j]) + sign*v)
		}
		a.diag[i] = float32(float64(a.diag[i]) + sign*row[i])
	}
	for r, c := range classIndex {
		dst := a.s[c*m : (c+1)*m]
		for j, v := range s.S[r*m : (r+1)*m] {
			dst[j] = float32(float64(dst[j]) + sign*v)
		}
	}
}
