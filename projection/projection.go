package projection

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/flycl/flycl/internal/parallel"
	"github.com/flycl/flycl/linalg"
)

// Method selects how W is applied.
type Method int

const (
	// Auto picks Dense when W has more than DenseThreshold non-zeros per
	// column of input, which on every machine we measured is faster
	// (see BenchmarkApply); Sparse otherwise.
	Auto Method = iota
	// Dense multiplies by the explicit m×d matrix with one sgemm.
	Dense
	// Sparse gathers the p non-zeros of each row.
	Sparse
)

// DenseThreshold is the fill ratio p/d above which Auto uses Dense.
// Measured on 2 AVX-512 cores (BenchmarkApply, 1000 samples, m=10000):
// dense 0.09 s vs sparse 1.23 s at d=768, p=300 (39%); 0.12 vs 0.34 s at
// p/d = 10%; sparse wins at 2% (0.19 vs 0.25 s) and 0.5% (0.11 vs 0.49 s).
// The costs cross near 3%.
const DenseThreshold = 0.03

func (m Method) String() string {
	switch m {
	case Auto:
		return "auto"
	case Dense:
		return "dense"
	case Sparse:
		return "sparse"
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// ParseMethod parses "auto", "dense" or "sparse".
func ParseMethod(s string) (Method, error) {
	switch s {
	case "auto", "":
		return Auto, nil
	case "dense":
		return Dense, nil
	case "sparse":
		return Sparse, nil
	}
	return Auto, fmt.Errorf("projection: unknown method %q (want auto, dense or sparse)", s)
}

// MarshalText writes the method's name ("auto", "dense" or "sparse"); a
// value that is none of them is an error.
func (m Method) MarshalText() ([]byte, error) {
	if m < Auto || m > Sparse {
		return nil, fmt.Errorf("projection: invalid method %d", int(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText parses a method's name (ParseMethod).
func (m *Method) UnmarshalText(b []byte) error {
	v, err := ParseMethod(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Matrix is an m×d matrix with exactly p non-zeros in every row, stored
// row by row: the non-zeros of row j are Cols[j*P:(j+1)*P] (ascending,
// distinct) with values Vals[j*P:(j+1)*P].
type Matrix struct {
	M, D, P int
	Cols    []int32
	Vals    []float32
	// Seed is the seed W was generated from, or nil for an explicit W.
	Seed *uint64

	denseOnce sync.Once
	dense     []float32

	digestOnce sync.Once
	digest     string
}

// Generate returns the m×d matrix with p non-zeros per row drawn from the
// seed: for each row, p distinct columns uniformly at random (a partial
// Fisher-Yates shuffle), then N(0,1) values. Rows are independent streams,
// so W does not depend on the number of threads.
func Generate(m, d, p int, seed uint64) (*Matrix, error) {
	return generate(context.Background(), m, d, p, seed)
}

// cancelEvery is how many rows a worker of generate makes between two
// looks at its context (about 1 ms of work at p = 300).
const cancelEvery = 64

// generate is Generate, stopped with ctx's error (wrapped) when ctx is
// done before W is: the rows are independent streams, so a W it returns
// has the same bits as one made in a single run.
func generate(ctx context.Context, m, d, p int, seed uint64) (*Matrix, error) {
	if m <= 0 || d <= 0 || p <= 0 {
		return nil, fmt.Errorf("projection: m, d and p must be positive (m=%d d=%d p=%d)", m, d, p)
	}
	if p > d {
		return nil, fmt.Errorf("projection: p=%d non-zeros per row exceeds input dimension d=%d", p, d)
	}
	w := &Matrix{M: m, D: d, P: p, Cols: make([]int32, m*p), Vals: make([]float32, m*p), Seed: &seed}
	parallel.For(m, func(lo, hi int) {
		perm := make([]int32, d)
		for i := range perm {
			perm[i] = int32(i)
		}
		swaps := make([]int32, p)
		var pairs []float64 // normals' scratch
		chosen := make([]uint64, (d+63)/64)
		for j := lo; j < hi; j++ {
			if (j-lo)%cancelEvery == 0 && ctx.Err() != nil {
				return
			}
			src := newNormalSource(seed, uint64(j))
			for i := 0; i < p; i++ {
				r := i + src.intn(d-i)
				perm[i], perm[r] = perm[r], perm[i]
				swaps[i] = int32(r)
			}
			// the p chosen columns in increasing order: marked in a
			// bitset and read back in order (O(d/64 + p), where sorting
			// them took most of the generation's time); then the swaps
			// undone, in reverse, so perm is the identity again.
			for _, c := range perm[:p] {
				chosen[c>>6] |= 1 << (c & 63)
			}
			cols := w.Cols[j*p : (j+1)*p]
			cols = sortedColumns(cols[:0], chosen)
			for i := p - 1; i >= 0; i-- {
				r := swaps[i]
				perm[i], perm[r] = perm[r], perm[i]
			}
			pairs = src.normals(w.Vals[j*p:(j+1)*p], pairs)
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("projection: generating W (m=%d d=%d p=%d seed %d): %w", m, d, p, seed, ctx.Err())
	}
	return w, nil
}

// New builds W from explicit entries and checks them: every row must
// have exactly p non-zeros in distinct columns within [0,d), and every
// value must be finite.
func New(m, d, p int, cols []int32, vals []float32) (*Matrix, error) {
	if m <= 0 || d <= 0 || p <= 0 || p > d {
		return nil, fmt.Errorf("projection: bad shape m=%d d=%d p=%d", m, d, p)
	}
	if len(cols) != m*p || len(vals) != m*p {
		return nil, fmt.Errorf("projection: want %d entries (m*p), got %d columns and %d values", m*p, len(cols), len(vals))
	}
	w := &Matrix{M: m, D: d, P: p, Cols: append([]int32(nil), cols...), Vals: append([]float32(nil), vals...)}
	for j := 0; j < m; j++ {
		c := w.Cols[j*p : (j+1)*p]
		v := w.Vals[j*p : (j+1)*p]
		// sort columns with their values
		idx := make([]int, p)
		for i := range idx {
			idx[i] = i
		}
		sortByKey(idx, c)
		cs, vs := make([]int32, p), make([]float32, p)
		for i, k := range idx {
			cs[i], vs[i] = c[k], v[k]
		}
		copy(c, cs)
		copy(v, vs)
		for i := range c {
			if c[i] < 0 || int(c[i]) >= d {
				return nil, fmt.Errorf("projection: row %d: column %d out of range [0,%d)", j, c[i], d)
			}
			if i > 0 && c[i] == c[i-1] {
				return nil, fmt.Errorf("projection: row %d: column %d repeated", j, c[i])
			}
			if math.IsNaN(float64(v[i])) || math.IsInf(float64(v[i]), 0) {
				return nil, fmt.Errorf("projection: row %d: non-finite value", j)
			}
		}
	}
	return w, nil
}

// FromDense builds W from a dense m×d row-major matrix whose rows all hold
// the same number p of non-zeros (as exported by another implementation).
func FromDense(m, d int, a []float32) (*Matrix, error) {
	if len(a) != m*d || m <= 0 || d <= 0 {
		return nil, fmt.Errorf("projection: dense W: want %d×%d values, got %d", m, d, len(a))
	}
	p := -1
	var cols []int32
	var vals []float32
	for j := 0; j < m; j++ {
		cnt := 0
		for i, v := range a[j*d : (j+1)*d] {
			if v != 0 {
				cols = append(cols, int32(i))
				vals = append(vals, v)
				cnt++
			}
		}
		if p < 0 {
			p = cnt
		} else if cnt != p {
			return nil, fmt.Errorf("projection: dense W: row %d has %d non-zeros, row 0 has %d", j, cnt, p)
		}
	}
	if p == 0 {
		return nil, fmt.Errorf("projection: dense W has no non-zeros")
	}
	return New(m, d, p, cols, vals)
}

// Dense returns W as a dense m×d row-major matrix (computed once, cached;
// callers must not modify it).
func (w *Matrix) Dense() []float32 {
	w.denseOnce.Do(func() {
		w.dense = make([]float32, w.M*w.D)
		for j := 0; j < w.M; j++ {
			row := w.dense[j*w.D : (j+1)*w.D]
			for i := 0; i < w.P; i++ {
				row[w.Cols[j*w.P+i]] = w.Vals[j*w.P+i]
			}
		}
	})
	return w.dense
}

// Resolve turns Auto into the concrete method used for this W.
func (w *Matrix) Resolve(m Method) Method {
	if m != Auto {
		return m
	}
	if float64(w.P)/float64(w.D) > DenseThreshold {
		return Dense
	}
	return Sparse
}

// Apply computes h = x Wᵀ for the n×d row-major x, writing the n×m result
// into h (len n*m). It checks every input for NaN and Inf first.
func (w *Matrix) Apply(ctx context.Context, method Method, x []float32, n int, h []float32) error {
	if err := w.check(ctx, x, n, h); err != nil {
		return err
	}
	switch w.Resolve(method) {
	case Dense:
		linalg.Sgemm(false, true, n, w.M, w.D, 1, x, w.D, w.Dense(), w.D, 0, h, w.M)
	default:
		w.applySparse(x, n, h)
	}
	return ctx.Err()
}

// ApplyRows is Apply with every row of h a function of its row of x
// alone: a sample's code has the same bits whatever the other samples of
// the call, their number and its place among them. Sparse (the gather)
// has that property already; Dense uses linalg.SdotRows, one fixed dot
// product per element, instead of sgemm, whose kernels round an element
// differently by its place in a block. It is what a predictor serving
// requests one by one or in batches needs (the same answer either way);
// for a few samples it is also faster than sgemm, which packs all of W
// for every call. Large products are split over the rows of W on all
// CPUs (goroutines: no BLAS threads are involved).
func (w *Matrix) ApplyRows(ctx context.Context, method Method, x []float32, n int, h []float32) error {
	if err := w.check(ctx, x, n, h); err != nil {
		return err
	}
	if w.Resolve(method) != Dense {
		w.applySparse(x, n, h)
		return ctx.Err()
	}
	dense := w.Dense()
	// Blocks of 64 rows of W (128 KiB at d=512): each is multiplied by
	// all n samples while it sits in cache, and W is read once whatever
	// n. The blocks are split over all CPUs unless the whole product is
	// small enough that starting goroutines would cost more than it saves.
	const rowBlock = 64
	blocks := (w.M + rowBlock - 1) / rowBlock
	run := func(lo, hi int) {
		for b := lo; b < hi; b++ {
			j0, j1 := b*rowBlock, min(w.M, (b+1)*rowBlock)
			linalg.SdotRows(n, j1-j0, w.D, x, w.D, dense[j0*w.D:], w.D, h[j0:], w.M)
		}
	}
	if n*w.M*w.D < 1<<20 {
		run(0, blocks)
	} else {
		parallel.For(blocks, run)
	}
	return ctx.Err()
}

// check validates the shapes and values of an application.
func (w *Matrix) check(ctx context.Context, x []float32, n int, h []float32) error {
	if len(x) != n*w.D {
		return fmt.Errorf("projection: input has %d values, want n*d = %d*%d", len(x), n, w.D)
	}
	if len(h) != n*w.M {
		return fmt.Errorf("projection: output has %d values, want n*m = %d*%d", len(h), n, w.M)
	}
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("projection: sample %d, feature %d is %v", i/w.D, i%w.D, v)
		}
	}
	return ctx.Err()
}

// applySparse processes blocks of samples: each row of W adds p scaled
// columns of the transposed block (linalg.SgatherRows: the samples of the
// block side by side, each value summed in the order of the row's
// columns, so a code's bits depend on its sample alone).
func (w *Matrix) applySparse(x []float32, n int, h []float32) {
	const blk = 64
	nb := (n + blk - 1) / blk
	transpose := func(xt []float32, r0, nr int) {
		for r := 0; r < nr; r++ {
			for c := 0; c < w.D; c++ {
				xt[c*blk+r] = x[(r0+r)*w.D+c]
			}
		}
	}
	if nb == 1 {
		// one block (a few samples, as a learn of a few photos): the rows
		// of W split among the workers instead, each value summed as below
		xt := make([]float32, w.D*blk)
		transpose(xt, 0, n)
		parallel.For(w.M, func(lo, hi int) {
			linalg.SgatherRows(n, hi-lo, w.P, w.Cols[lo*w.P:hi*w.P], w.Vals[lo*w.P:hi*w.P], xt, blk, h[lo:], w.M)
		})
		return
	}
	parallel.For(nb, func(lo, hi int) {
		xt := make([]float32, w.D*blk)
		for b := lo; b < hi; b++ {
			r0 := b * blk
			nr := min(n, r0+blk) - r0
			transpose(xt, r0, nr)
			linalg.SgatherRows(nr, w.M, w.P, w.Cols, w.Vals, xt, blk, h[r0*w.M:], w.M)
		}
	})
}
