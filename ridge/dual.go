package ridge

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/flycl/flycl/internal/parallel"
	"github.com/flycl/flycl/linalg"
)

// Dual is the dual form of the ridge classifier, for fewer samples than
// dimensions: it keeps the samples' codes themselves (sparse: a top-k
// code has k non-zeros of m) with their class indices, and the n×n
// kernel K = H Hᵀ in float64, grown by rows as samples come. With K's
// eigendecomposition K = Q Λ Qᵀ every quantity of the ridge solution is
// a diagonal scaling in the basis Q:
//
//	A = (K + λI)⁻¹ Y,        W = Hᵀ A          (the primal (HᵀH + λI)⁻¹HᵀY)
//	hat = K (K + λI)⁻¹,      eigenvalues λᵢ/(λᵢ+λ)
//	GCV(λ) = (‖(I − hat) Y‖²/n) / (tr(I − hat)/n)²
//
// so GCV costs O(n·nc) per λ and can be minimised over every λ > 0
// (BestContinuous). The solution at one λ needs less: the Cholesky
// factor of K + λI (Solve) gives A and the hat matrix's entries
// (Hat: K(K + λI)⁻¹ = I − λ(K + λI)⁻¹), from which the leave-one-out
// predictions come. Taking samples back out (Remove) leaves
// exactly what a fresh Dual of the remaining samples holds: each entry of
// K depends on its two rows alone, computed the same way whatever else
// the Dual holds.
//
// A row whose class index is -1 has no target (all zero): a class
// dropped without its data (Accumulator.RemoveClass keeps the samples in
// G likewise).
type Dual struct {
	m    int
	cols [][]int32   // per row: the columns of its non-zeros, ascending
	vals [][]float32 // per row: their values
	cls  []int       // per row: class index, or -1
	nc   int
	k    []float64 // n×n, symmetric, row-major

	// the eigendecomposition of k, when eigOK
	eigOK  bool
	eigval []float64 // ascending, clamped at 0
	eigvec []float64 // row i: the unit eigenvector of eigval[i]

	sums *sumsCache // S of the rows, reused while they are the same
}

// sumsCache holds the last S computed with what it was computed from:
// the class count, every row's class and its storage (rows never change
// once added, so the same storage is the same row). A Dual and its clones
// share one; S checks the key (O(n)) before reusing it, so no mutation
// has to remember to drop it, and concurrent readers each see a whole
// entry.
type sumsCache struct{ p atomic.Pointer[sumsEntry] }

type sumsEntry struct {
	nc   int
	cls  []int
	rows []*int32
	s    []float32
	s64  []float64 // the float64 sums s was rounded from
}

// rowKey is the storage of row i, its identity.
func (d *Dual) rowKey(i int) *int32 {
	if len(d.cols[i]) == 0 {
		return nil
	}
	return &d.cols[i][0]
}

// holds reports whether e was computed from d's rows as they are.
func (e *sumsEntry) holds(d *Dual) bool {
	return e != nil && e.nc == d.nc && len(e.rows) == len(d.cls) && e.prefix(d)
}

// prefix reports whether e was computed from the first rows of d, with
// their classes, and no more classes than d has: d's sums are then e's
// with the later rows added.
func (e *sumsEntry) prefix(d *Dual) bool {
	if e == nil || e.nc > d.nc || len(e.rows) > len(d.cls) || !slices.Equal(e.cls, d.cls[:len(e.cls)]) {
		return false
	}
	for i, r := range e.rows {
		if r != d.rowKey(i) {
			return false
		}
	}
	return true
}

// NewDual returns an empty dual form for m-dimensional codes.
func NewDual(m int) (*Dual, error) {
	if m <= 0 {
		return nil, fmt.Errorf("ridge: dimension must be positive, got %d", m)
	}
	return &Dual{m: m, sums: new(sumsCache)}, nil
}

// Dim returns m.
func (d *Dual) Dim() int { return d.m }

// Samples returns n, the rows held.
func (d *Dual) Samples() int { return len(d.cls) }

// Classes returns the number of classes (the columns of Y).
func (d *Dual) Classes() int { return d.nc }

// Row returns row i: the columns and values of its non-zeros and its
// class index (shared: do not modify).
func (d *Dual) Row(i int) (cols []int32, vals []float32, class int) {
	return d.cols[i], d.vals[i], d.cls[i]
}

// NonZeros returns the non-zeros of all rows together.
func (d *Dual) NonZeros() int {
	t := 0
	for _, c := range d.cols {
		t += len(c)
	}
	return t
}

// Clone returns an independent copy. The rows, K and its
// eigendecomposition are shared: no method changes them in place (a
// change of the rows makes new ones), so sharing costs a clone nothing
// (K alone is 8n² bytes: 1.3 MB at n = 400).
func (d *Dual) Clone() *Dual {
	c := *d
	c.cols, c.vals, c.cls = slices.Clone(d.cols), slices.Clone(d.vals), slices.Clone(d.cls)
	return &c
}

// GrowClasses makes room for nc classes (never shrinks).
func (d *Dual) GrowClasses(nc int) { d.nc = max(d.nc, nc) }

// Add appends the n rows of the dense codes h (n×m) with their class
// indices (>= 0; classes beyond Classes() are added) and grows K by them.
func (d *Dual) Add(h []float32, n int, labels []int) error {
	if len(h) != n*d.m || len(labels) != n {
		return fmt.Errorf("ridge: dual add: %d values and %d labels for %d×%d codes", len(h), len(labels), n, d.m)
	}
	cols, vals := make([][]int32, n), make([][]float32, n)
	for i := range n {
		row := h[i*d.m : (i+1)*d.m]
		nz := 0
		for j, v := range row {
			if v != 0 {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					return fmt.Errorf("ridge: dual add: code %d of sample %d is %v", j, i, v)
				}
				nz++
			}
		}
		cols[i], vals[i] = make([]int32, 0, nz), make([]float32, 0, nz)
		for j, v := range row {
			if v != 0 {
				cols[i] = append(cols[i], int32(j))
				vals[i] = append(vals[i], v)
			}
		}
		if labels[i] < 0 {
			return fmt.Errorf("ridge: dual add: sample %d has class index %d", i, labels[i])
		}
	}
	for i := range n {
		d.nc = max(d.nc, labels[i]+1)
	}
	d.appendRows(cols, vals, labels)
	return nil
}

// appendRows appends sparse rows and grows K: entry (i, j), i >= j, is
// the dot product of row j gathered from row i scattered, in float64.
func (d *Dual) appendRows(cols [][]int32, vals [][]float32, cls []int) {
	n0 := len(d.cls)
	d.cols, d.vals, d.cls = append(d.cols, cols...), append(d.vals, vals...), append(d.cls, cls...)
	n := len(d.cls)
	k := make([]float64, n*n)
	for i := range n0 {
		copy(k[i*n:i*n+n0], d.k[i*n0:(i+1)*n0])
	}
	// The new rows go by blocks of up to dualBlock, scattered transposed
	// (column c holds the block's values at c, contiguous, in float32):
	// row j's gather (linalg.DgatherSparse) then reads, per non-zero, the
	// block's values together. Entry
	// (i, j) is Σ over row j's columns, ascending, of hᵢ[c]·hⱼ[c] in
	// float64 (exact products of float32 values; columns where row i is
	// zero add an exact 0): the same sum in the same order as one row
	// gathered at a time, and, since only the columns both rows hold add
	// anything, the same bits whichever of i, j is scattered.
	const dualBlock = 32
	for b0 := n0; b0 < n; b0 += dualBlock {
		b1 := min(n, b0+dualBlock)
		nb := b1 - b0
		buf := make([]float32, d.m*nb)
		for i := b0; i < b1; i++ {
			for t, c := range d.cols[i] {
				buf[int(c)*nb+i-b0] = d.vals[i][t]
			}
		}
		parallel.For(b1, func(lo, hi int) {
			s := make([]float64, nb)
			for j := lo; j < hi; j++ {
				linalg.DgatherSparse(d.cols[j], d.vals[j], buf, nb, s)
				for r, v := range s {
					if i := b0 + r; j <= i {
						k[i*n+j], k[j*n+i] = v, v
					}
				}
			}
		})
	}
	d.k, d.eigOK = k, false
}

// Remove drops the rows given (indices, any order, distinct).
func (d *Dual) Remove(rows []int) error {
	n := len(d.cls)
	drop := make([]bool, n)
	for _, r := range rows {
		if r < 0 || r >= n || drop[r] {
			return fmt.Errorf("ridge: dual remove: row %d outside [0,%d) or given twice", r, n)
		}
		drop[r] = true
	}
	keep := make([]int, 0, n-len(rows))
	for i := range n {
		if !drop[i] {
			keep = append(keep, i)
		}
	}
	nn := len(keep)
	k := make([]float64, nn*nn)
	cols, vals, cls := make([][]int32, nn), make([][]float32, nn), make([]int, nn)
	for a, i := range keep {
		for b, j := range keep {
			k[a*nn+b] = d.k[i*n+j]
		}
		cols[a], vals[a], cls[a] = d.cols[i], d.vals[i], d.cls[i]
	}
	d.cols, d.vals, d.cls, d.k, d.eigOK = cols, vals, cls, k, false
	return nil
}

// RemoveClass deletes class index c: rows of class c lose their target
// (class -1; Remove takes rows out) and higher classes move down by one.
func (d *Dual) RemoveClass(c int) error {
	if c < 0 || c >= d.nc {
		return fmt.Errorf("ridge: remove class %d of %d", c, d.nc)
	}
	for i, l := range d.cls {
		switch {
		case l == c:
			d.cls[i] = -1
		case l > c:
			d.cls[i]--
		}
	}
	d.nc--
	d.eigOK = false
	return nil
}

// SetClass sets row i's class index (-1: no target).
func (d *Dual) SetClass(i, c int) {
	d.cls[i] = c
	d.nc = max(d.nc, c+1)
}

// Find returns the rows holding the n codes h (n×m) with class indices
// labels, one distinct row each: a row whose non-zeros are the code's,
// bit for bit, or else the row of that class nearest the code, if it is
// within tol relative (codes of the same features computed by another
// kernel differ in the last bits). ok is false when some code has none.
func (d *Dual) Find(h []float32, n int, labels []int, tol float64) (rows []int, ok bool) {
	used := make([]bool, len(d.cls))
	rows = make([]int, n)
	for i := range n {
		code := h[i*d.m : (i+1)*d.m]
		best, bestD := -1, math.Inf(1)
		var norm float64
		for _, v := range code {
			norm += float64(v) * float64(v)
		}
		for r := range d.cls {
			if used[r] || d.cls[r] != labels[i] {
				continue
			}
			dist := d.distance(r, code)
			if dist < bestD {
				best, bestD = r, dist
				if dist == 0 {
					break
				}
			}
		}
		if best < 0 || bestD > tol*tol*norm {
			return nil, false
		}
		used[best], rows[i] = true, best
	}
	return rows, true
}

// distance returns ‖row r − code‖², computed term by term (0 exactly
// when the row is the code).
func (d *Dual) distance(r int, code []float32) float64 {
	var s float64
	cols, vals := d.cols[r], d.vals[r]
	j := 0
	for c, v := range code {
		a := 0.0
		if j < len(cols) && int(cols[j]) == c {
			a = float64(vals[j])
			j++
		}
		e := a - float64(v)
		s += e * e
	}
	return s
}

// S returns the class sums Sᵀ = YᵀH (classes × m) in float32, summed in
// float64.
func (d *Dual) S() []float32 { return slices.Clone(d.SharedS()) }

// SharedS is S without the copy: the slice is shared with the Dual and
// its clones (and the next call's answer): callers must not modify it.
func (d *Dual) SharedS() []float32 {
	if d.sums != nil {
		if e := d.sums.p.Load(); e.holds(d) {
			return e.s
		}
	}
	var prev *sumsEntry
	if d.sums != nil {
		if e := d.sums.p.Load(); e.prefix(d) {
			prev = e
		}
	}
	out, s64 := d.classSums(prev)
	if d.sums != nil && d.nc*d.m > 0 {
		rows := make([]*int32, len(d.cls))
		for i := range rows {
			rows[i] = d.rowKey(i)
		}
		d.sums.p.Store(&sumsEntry{nc: d.nc, cls: slices.Clone(d.cls), rows: rows, s: out, s64: s64})
	}
	return out
}

// classSums computes S: per class, the sum of its rows in float64, in
// the order of the rows, rounded once to float32. With prev (sums of the
// first rows of d) it adds the later rows to prev's float64 sums: the
// same additions in the same order, so the same bits, and only the
// classes of the later rows are rounded again. It returns the float64
// sums too.
func (d *Dual) classSums(prev *sumsEntry) ([]float32, []float64) {
	s := make([]float64, d.nc*d.m)
	out := make([]float32, len(s))
	from := 0
	if prev != nil {
		copy(s, prev.s64)
		copy(out, prev.s)
		from = len(prev.rows)
	}
	changed := make([]bool, d.nc)
	if prev == nil {
		for c := range changed {
			changed[c] = true
		}
	}
	for i := from; i < len(d.cls); i++ {
		c := d.cls[i]
		if c < 0 {
			continue
		}
		changed[c] = true
		row := s[c*d.m : (c+1)*d.m]
		for t, j := range d.cols[i] {
			row[j] += float64(d.vals[i][t])
		}
	}
	for c, ch := range changed {
		if ch {
			for j, v := range s[c*d.m : (c+1)*d.m] {
				out[c*d.m+j] = float32(v)
			}
		}
	}
	return out, s
}

// GramDiag returns the diagonal of G = HᵀH in float64.
func (d *Dual) GramDiag() []float64 {
	g := make([]float64, d.m)
	for i := range d.cls {
		for t, j := range d.cols[i] {
			v := float64(d.vals[i][t])
			g[j] += v * v
		}
	}
	return g
}

// Trace returns tr K = tr G.
func (d *Dual) Trace() float64 {
	n := len(d.cls)
	var t float64
	for i := range n {
		t += d.k[i*n+i]
	}
	return t
}

// Dense returns the rows as dense codes (n×m) and their class indices.
func (d *Dual) Dense() ([]float32, []int) {
	h := make([]float32, len(d.cls)*d.m)
	for i := range d.cls {
		row := h[i*d.m : (i+1)*d.m]
		for t, j := range d.cols[i] {
			row[j] = d.vals[i][t]
		}
	}
	return h, slices.Clone(d.cls)
}

// Accumulator returns the primal statistics of the rows: G = HᵀH and
// S = HᵀY, as an Accumulator that learned them in one Add (rows without
// a target count in G and the sample count only).
func (d *Dual) Accumulator() (*Accumulator, error) {
	a, err := NewAccumulator(d.m)
	if err != nil {
		return nil, err
	}
	h, cls := d.Dense()
	n := len(cls)
	// rows with a target go through Add (G and S); the others add to G only
	var with, without []int
	for i, c := range cls {
		if c >= 0 {
			with = append(with, i)
		} else {
			without = append(without, i)
		}
	}
	a.GrowClasses(d.nc)
	pick := func(rows []int) ([]float32, []int) {
		hs, ls := make([]float32, 0, len(rows)*d.m), make([]int, len(rows))
		for q, i := range rows {
			hs = append(hs, h[i*d.m:(i+1)*d.m]...)
			ls[q] = max(cls[i], 0)
		}
		return hs, ls
	}
	if len(with) == n {
		if err := a.Add(h, n, cls); err != nil {
			return nil, err
		}
	} else {
		if len(with) > 0 {
			hs, ls := pick(with)
			if err := a.Add(hs, len(with), ls); err != nil {
				return nil, err
			}
		}
		hs, ls := pick(without)
		s := slices.Clone(a.S())
		if err := a.Add(hs, len(without), ls); err != nil {
			return nil, err
		}
		if err := a.SetS(s, d.nc, n); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// FromRows returns the dual form of the given sparse rows (as Row gives
// them) with nc classes, checking that they mean something: columns in
// [0,m) ascending, finite values, class indices in [-1,nc).
func FromRows(m, nc int, cols [][]int32, vals [][]float32, cls []int) (*Dual, error) {
	d, err := NewDual(m)
	if err != nil {
		return nil, err
	}
	if len(vals) != len(cols) || len(cls) != len(cols) {
		return nil, fmt.Errorf("ridge: dual rows: %d column lists, %d value lists, %d classes", len(cols), len(vals), len(cls))
	}
	for i := range cols {
		if len(vals[i]) != len(cols[i]) {
			return nil, fmt.Errorf("ridge: dual row %d: %d columns, %d values", i, len(cols[i]), len(vals[i]))
		}
		for t, c := range cols[i] {
			if c < 0 || int(c) >= m || t > 0 && c <= cols[i][t-1] {
				return nil, fmt.Errorf("ridge: dual row %d: column %d out of order or outside [0,%d)", i, c, m)
			}
			if v := float64(vals[i][t]); math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("ridge: dual row %d: value %d is %v", i, t, v)
			}
		}
		if cls[i] < -1 || cls[i] >= nc {
			return nil, fmt.Errorf("ridge: dual row %d: class index %d outside [-1,%d)", i, cls[i], nc)
		}
	}
	d.nc = nc
	d.appendRows(cols, vals, cls)
	return d, nil
}

// eigen decomposes K (once per change of the rows).
func (d *Dual) eigen() error {
	if d.eigOK {
		return nil
	}
	n := len(d.cls)
	a := slices.Clone(d.k)
	w := make([]float64, n)
	if err := linalg.Dsyevd(true, n, a, n, w); err != nil {
		return fmt.Errorf("ridge: dual: %w", err)
	}
	for i := range w {
		w[i] = max(w[i], 0)
	}
	d.eigval, d.eigvec, d.eigOK = w, a, true
	return nil
}

// Eigenvalues returns the eigenvalues of K, ascending, clamped at 0.
func (d *Dual) Eigenvalues() ([]float64, error) {
	if err := d.eigen(); err != nil {
		return nil, err
	}
	return slices.Clone(d.eigval), nil
}

// targets returns Y transposed (row c of nc is column c of Y) for the rows.
func (d *Dual) targets() []float64 {
	n := len(d.cls)
	y := make([]float64, d.nc*n)
	for i, c := range d.cls {
		if c >= 0 {
			y[c*n+i] = 1
		}
	}
	return y
}

// Spectrum is a GCV curve in closed form: the eigenvalues of K and the
// squared norms of the targets' components along its eigenvectors.
type Spectrum struct {
	eig []float64 // eigenvalues, clamped at 0
	z2  []float64 // Σ_c (qᵢᵀ y_c)²
}

// Spectrum returns the GCV curve of all rows against their targets.
func (d *Dual) Spectrum() (*Spectrum, error) {
	if err := d.eigen(); err != nil {
		return nil, err
	}
	n := len(d.cls)
	return newSpectrum(d.eigval, d.eigvec, n, d.targets(), d.nc), nil
}

// SpectrumOf returns the GCV curve of the rows given, against one-hot
// targets of labels (in [0,nc)): the GCV of a task alone.
func (d *Dual) SpectrumOf(rows []int, labels []int, nc int) (*Spectrum, error) {
	n, nAll := len(rows), len(d.cls)
	a := make([]float64, n*n)
	for p, i := range rows {
		for q, j := range rows {
			a[p*n+q] = d.k[i*nAll+j]
		}
	}
	w := make([]float64, n)
	if err := linalg.Dsyevd(true, n, a, n, w); err != nil {
		return nil, fmt.Errorf("ridge: dual: %w", err)
	}
	for i := range w {
		w[i] = max(w[i], 0)
	}
	y := make([]float64, nc*n)
	for i, l := range labels {
		y[l*n+i] = 1
	}
	return newSpectrum(w, a, n, y, nc), nil
}

func newSpectrum(eig, vec []float64, n int, y []float64, nc int) *Spectrum {
	z := make([]float64, nc*n)
	if n > 0 && nc > 0 {
		linalg.Dgemm(false, true, nc, n, n, 1, y, n, vec, n, 0, z, n)
	}
	z2 := make([]float64, n)
	for c := range nc {
		for i, v := range z[c*n : (c+1)*n] {
			z2[i] += v * v
		}
	}
	return &Spectrum{eig: slices.Clone(eig), z2: z2}
}

// GCV returns the GCV score at λ > 0: (RSS/n)/(1 − df/n)² with
// RSS = Σᵢ (λ/(λᵢ+λ))² ‖zᵢ‖² and 1 − df/n = Σᵢ λ/(λᵢ+λ) / n; no
// difference of nearly equal numbers is formed.
func (s *Spectrum) GCV(lambda float64) float64 {
	n := float64(len(s.eig))
	var rss, den float64
	for i, e := range s.eig {
		r := lambda / (e + lambda)
		rss += r * r * s.z2[i]
		den += r
	}
	den /= n
	if !(den > 0) {
		return math.Inf(1)
	}
	return rss / n / (den * den)
}

// Scores returns the GCV score of each λ of grid.
func (s *Spectrum) Scores(ctx context.Context, grid []float64) ([]float64, error) {
	if err := checkGrid(grid); err != nil {
		return nil, err
	}
	out := make([]float64, len(grid))
	for i, l := range grid {
		out[i] = s.GCV(l)
	}
	return out, ctx.Err()
}

// MeanEigenvalue returns tr K / n (0 for no rows).
func (s *Spectrum) MeanEigenvalue() float64 {
	var t float64
	for _, e := range s.eig {
		t += e
	}
	if len(s.eig) == 0 {
		return 0
	}
	return t / float64(len(s.eig))
}

// ContinuousRange is the range BestContinuous searches, relative to the
// mean eigenvalue of K (tr K/n, the mean squared norm of a code): λ from
// 10⁻⁶ to 10⁶ times it. Below the floor the solve in float64 would be
// limited by rounding (K's eigenvalues are known to about 10⁻¹⁶ of the
// largest, and a λ of 10⁻⁶ of the mean keeps their error below 10⁻⁹ of
// the solution); above the ceiling the classifier is zero to 10⁻⁶.
const ContinuousRange = 1e6

// Limit says where in its range a continuous GCV choice fell.
type Limit string

const (
	// LimitNone: the minimum is inside the range.
	LimitNone Limit = ""
	// LimitInterpolating: GCV still falls at the range's floor: the curve
	// keeps falling toward λ → 0, the interpolating limit (every training
	// sample fitted); the floor is chosen.
	LimitInterpolating Limit = "interpolating"
	// LimitConstant: GCV still falls at the ceiling (λ → ∞, the zero
	// classifier); the ceiling is chosen.
	LimitConstant Limit = "constant"
)

// BestContinuous minimises GCV over λ in [floor, ceiling] =
// mean eigenvalue × [1/ContinuousRange, ContinuousRange]: a scan of
// 4 points per decade (returned with its scores), then golden-section
// search on log λ in the bracket of the scan's best point, to a relative
// precision of 10⁻⁶ in λ. The limit says whether an end of the range was
// chosen.
func (s *Spectrum) BestContinuous() (lambda float64, limit Limit, scan, scores []float64) {
	mean := s.MeanEigenvalue()
	if !(mean > 0) {
		mean = 1
	}
	lo, hi := math.Log(mean/ContinuousRange), math.Log(mean*ContinuousRange)
	const per = 4
	steps := int(math.Round((hi-lo)/math.Ln10)) * per
	scan, scores = make([]float64, steps+1), make([]float64, steps+1)
	best := 0
	for i := range scan {
		scan[i] = math.Exp(lo + (hi-lo)*float64(i)/float64(steps))
		scores[i] = s.GCV(scan[i])
		if scores[i] < scores[best] {
			best = i
		}
	}
	switch best {
	case 0:
		return scan[0], LimitInterpolating, scan, scores
	case steps:
		return scan[steps], LimitConstant, scan, scores
	}
	a, b := math.Log(scan[best-1]), math.Log(scan[best+1])
	f := func(t float64) float64 { return s.GCV(math.Exp(t)) }
	g := (math.Sqrt(5) - 1) / 2
	x1, x2 := b-g*(b-a), a+g*(b-a)
	f1, f2 := f(x1), f(x2)
	for b-a > 1e-6 {
		if f1 <= f2 {
			b, x2, f2 = x2, x1, f1
			x1 = b - g*(b-a)
			f1 = f(x1)
		} else {
			a, x1, f1 = x1, x2, f2
			x2 = a + g*(b-a)
			f2 = f(x2)
		}
	}
	t := (a + b) / 2
	if f(t) > scores[best] {
		return scan[best], LimitNone, scan, scores
	}
	return math.Exp(t), LimitNone, scan, scores
}

// Solution is the dual solution at one λ: A = (K + λI)⁻¹Y, with the
// Cholesky factor of K + λI it was solved by (or, where K + λI is too
// near singular to factor in float64, K's eigendecomposition).
type Solution struct {
	d      *Dual
	lambda float64
	a      []float64 // nc×n: row c is column c of A
	chol   []float64 // n×n: the factor of K + λI (upper triangle), or nil: eigen
}

// Solve returns the solution at λ > 0. It factors K + λI by Cholesky
// (n³/3 flops, where K's eigendecomposition costs about 9n³): the
// solution at one λ needs no more. Only where the factorisation fails
// (λ below K's rounding, as a λ given by hand can be) does it solve
// through K's eigendecomposition, which takes any λ > 0.
func (d *Dual) Solve(ctx context.Context, lambda float64) (*Solution, error) {
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return nil, fmt.Errorf("ridge: dual solve: lambda %g is not positive and finite", lambda)
	}
	n, nc := len(d.cls), d.nc
	f := slices.Clone(d.k)
	for i := range n {
		f[i*n+i] += lambda
	}
	if err := potrf(n, f); err == nil {
		a := d.targets()
		potrs(n, nc, f, a)
		return &Solution{d: d, lambda: lambda, a: a, chol: f}, ctx.Err()
	}
	return d.solveEigen(ctx, lambda)
}

// goCholesky is the largest n whose Cholesky factor (and solves) the dual
// form computes in Go (linalg.DpotrfGo): below it OpenBLAS's threads,
// woken by a call, spin for longer after it than the factorisation takes
// (at n = 200 on 2 cores: about 1.5 ms of work and 20 ms of spinning per
// learn); above it OpenBLAS's kernels are several times faster.
const goCholesky = 512

func potrf(n int, a []float64) error {
	if n <= goCholesky {
		return linalg.DpotrfGo(n, a, n)
	}
	return linalg.Dpotrf(n, a, n)
}

func potrs(n, nrhs int, a, bt []float64) {
	if n <= goCholesky {
		linalg.DpotrsGo(n, nrhs, a, n, bt, n)
		return
	}
	linalg.Dpotrs(n, nrhs, a, n, bt, n)
}

// solveEigen is Solve through K's eigendecomposition.
func (d *Dual) solveEigen(ctx context.Context, lambda float64) (*Solution, error) {
	n, nc := len(d.cls), d.nc
	if err := d.eigen(); err != nil {
		return nil, err
	}
	y := d.targets()
	z := make([]float64, nc*n)
	a := make([]float64, nc*n)
	if n > 0 && nc > 0 {
		linalg.Dgemm(false, true, nc, n, n, 1, y, n, d.eigvec, n, 0, z, n) // z = Yᵀ Q
		for c := range nc {
			for i, e := range d.eigval {
				z[c*n+i] /= e + lambda
			}
		}
		linalg.Dgemm(false, false, nc, n, n, 1, z, n, d.eigvec, n, 0, a, n) // A ᵀ = z Qᵀ
	}
	return &Solution{d: d, lambda: lambda, a: a}, ctx.Err()
}

// coefTile is the bytes of W's float64 sums a worker of Coef fills at a
// time (a core's L2 cache holds them).
const coefTile = 128 << 10

// Coef returns the primal classifier W = HᵀA as classes × m float32
// rows (summed in float64): what Accumulator.Solve returns for the same
// samples and λ, up to the rounding of the primal's float32 solve.
func (s *Solution) Coef() []float32 {
	d := s.d
	n, m := len(d.cls), d.m
	nc := d.nc
	out := make([]float32, nc*m)
	if nc == 0 || n == 0 {
		return out
	}
	// W's columns split among the workers; each walks every row's
	// non-zeros in its range once per group of up to 64 classes (a
	// contiguous multiply-add per non-zero, and at most 64 float64 sums
	// per column held). Entry (c, j) is the sum over the rows in order of
	// aᵢ꜀·hᵢⱼ, whatever the split.
	const group = 64
	at := make([]float64, n*group) // Aᵀ of the group: row i holds sample i's coefficients
	for c0 := 0; c0 < nc; c0 += group {
		g := min(group, nc-c0)
		for c := range g {
			for i := range n {
				at[i*g+c] = s.a[(c0+c)*n+i]
			}
		}
		// a worker's columns go by tiles whose sums (tile × g float64)
		// stay in a core's cache while every row adds its non-zeros there
		tile := max(64, coefTile/(8*g))
		parallel.For(m, func(lo, hi int) {
			acc := make([]float64, min(tile, hi-lo)*g)
			for a := lo; a < hi; a += tile {
				b := min(hi, a+tile)
				clear(acc)
				for i := range n {
					cols, vals := d.cols[i], d.vals[i]
					t0, _ := slices.BinarySearch(cols, int32(a))
					t1, _ := slices.BinarySearch(cols[t0:], int32(b))
					linalg.DscatterSparse(cols[t0:t0+t1], vals[t0:t0+t1], a, at[i*g:(i+1)*g], acc, g)
				}
				for j := a; j < b; j++ {
					for c := range g {
						out[(c0+c)*m+j] = float32(acc[(j-a)*g+c])
					}
				}
			}
		})
	}
	return out
}

// Hat returns the entries hat[i][j] = [K (K + λI)⁻¹]ᵢⱼ for the rows i
// of rows and the columns j of cols (len(rows)×len(cols), row-major):
// hᵢᵀ(G + λI)⁻¹hⱼ in the primal. hat[i][i] is sample i's leverage.
//
// With the Cholesky factor they are δᵢⱼ − λ[(K + λI)⁻¹]ᵢⱼ (since
// K(K + λI)⁻¹ = I − λ(K + λI)⁻¹), from one solve per column (n² flops
// each, where the eigenvectors' sums cost n per entry).
func (s *Solution) Hat(rows, cols []int) []float64 {
	d := s.d
	n := len(d.cls)
	out := make([]float64, len(rows)*len(cols))
	if s.chol != nil {
		x := make([]float64, len(cols)*n)
		for r, j := range cols {
			x[r*n+j] = 1
		}
		potrs(n, len(cols), s.chol, x)
		for p, i := range rows {
			for r, j := range cols {
				v := -s.lambda * x[r*n+i]
				if i == j {
					v += 1
				}
				out[p*len(cols)+r] = v
			}
		}
		return out
	}
	f := make([]float64, n)
	for q, e := range d.eigval {
		f[q] = e / (e + s.lambda)
	}
	for p, i := range rows {
		for r, j := range cols {
			var v float64
			for q := range n {
				v += d.eigvec[q*n+i] * f[q] * d.eigvec[q*n+j]
			}
			out[p*len(cols)+r] = v
		}
	}
	return out
}

// LeaveOneOut returns, for the rows given, their fitted class scores
// (len(rows)×nc, row-major), their exact leave-one-out class scores (the
// scores each would get from the solution without it) and their
// leverages hat[i][i], all in float64 by the closed forms of the dual:
// with B = (K + λI)⁻¹ and A = BY, the residual is Y − KA = λA, so
//
//	fitted  = y − λA,   leverage = 1 − λBᵢᵢ,   leave-one-out = y − A/Bᵢᵢ
//
// (the leave-one-out residual is the residual over 1 − hᵢᵢ). No
// difference of nearly equal numbers is formed: where the leverage nears
// 1 (small λ) the leave-one-out scores keep their precision, which the
// form (f − hᵢᵢy)/(1 − hᵢᵢ) from scores f rounded to float32 loses.
func (s *Solution) LeaveOneOut(rows []int) (fitted, loo, lev []float64) {
	d := s.d
	n, nc := len(d.cls), d.nc
	binv := make([]float64, len(rows)) // Bᵢᵢ
	if s.chol != nil {
		x := make([]float64, len(rows)*n)
		for p, i := range rows {
			x[p*n+i] = 1
		}
		potrs(n, len(rows), s.chol, x)
		for p, i := range rows {
			binv[p] = x[p*n+i]
		}
	} else {
		for p, i := range rows {
			var v float64
			for q, e := range d.eigval {
				u := d.eigvec[q*n+i]
				v += u * u / (e + s.lambda)
			}
			binv[p] = v
		}
	}
	fitted, loo, lev = make([]float64, len(rows)*nc), make([]float64, len(rows)*nc), make([]float64, len(rows))
	for p, i := range rows {
		lev[p] = 1 - s.lambda*binv[p]
		for c := range nc {
			y := 0.0
			if d.cls[i] == c {
				y = 1
			}
			a := s.a[c*n+i]
			fitted[p*nc+c] = y - s.lambda*a
			loo[p*nc+c] = y - a/binv[p]
		}
	}
	return fitted, loo, lev
}

// Fitted returns the fitted class scores (hat Y) of the rows given
// (len(rows)×nc, row-major): hᵢᵀW in exact arithmetic.
func (s *Solution) Fitted(rows []int) []float64 {
	d := s.d
	n, nc := len(d.cls), d.nc
	out := make([]float64, len(rows)*nc)
	for p, i := range rows {
		for c := range nc {
			var v float64
			for j := range n {
				v += d.k[i*n+j] * s.a[c*n+j]
			}
			out[p*nc+c] = v
		}
	}
	return out
}
