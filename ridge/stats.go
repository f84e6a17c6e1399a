package ridge

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/flycl/flycl/linalg"
)

// Stats are the exact sufficient statistics of one task (or of one shard
// of a task) for ridge regression on one-hot targets:
//
//	G = Σ hᵀh      (m×m, kept as its lower triangle, float64)
//	S = Σ hᵀy      (one row of m values per class)
//	counts          samples per class; n = Σ counts = ‖Y‖²_F
//
// They are what a worker computes from its shard and what any number of
// shards add up to. Everything is float64: the codes are float32, so each
// product h_i h_j is exact in float64 and the only rounding is in the
// sums, about 2⁻⁵³ relative per addition. Two partitions of the same
// samples (different shard counts or orders) therefore give G's that
// differ by a few units in the 16th digit; rounded to the float32 of a
// model they agree except, rarely, in the last bit (see MergeTolerance).
//
// Classes are identified by integer labels; rows of S follow Labels, which
// is kept in ascending order.
type Stats struct {
	M      int
	N      int       // samples
	Labels []int     // class labels, ascending
	Counts []int     // samples per label
	G      []float64 // lower triangle, row by row: row i holds G[i][0..i] at i(i+1)/2
	S      []float64 // len(Labels)×M, row c = Σ of the codes labelled Labels[c]
}

// NewStats returns empty statistics for m-dimensional codes.
func NewStats(m int) (*Stats, error) {
	if m <= 0 {
		return nil, fmt.Errorf("ridge: dimension must be positive, got %d", m)
	}
	return &Stats{M: m, G: make([]float64, PackedLen(m))}, nil
}

// PackedLen is m(m+1)/2, the length of a packed lower triangle.
func PackedLen(m int) int { return m * (m + 1) / 2 }

// statsBlock is the number of rows of G computed per matrix product.
const statsBlock = 256

// classRow returns the row of S for label l, inserting a zero row (and
// keeping Labels ascending) when l is new.
func (s *Stats) classRow(l int) int {
	i, ok := slices.BinarySearch(s.Labels, l)
	if ok {
		return i
	}
	s.Labels = slices.Insert(s.Labels, i, l)
	s.Counts = slices.Insert(s.Counts, i, 0)
	s.S = slices.Insert(s.S, i*s.M, make([]float64, s.M)...)
	return i
}

// Add accumulates the n×m row-major codes h with their labels.
func (s *Stats) Add(h []float32, n int, labels []int) error {
	m := s.M
	if len(h) != n*m {
		return fmt.Errorf("ridge: codes have %d values, want %d×%d", len(h), n, m)
	}
	if len(labels) != n {
		return fmt.Errorf("ridge: %d labels for %d samples", len(labels), n)
	}
	if n == 0 {
		return nil
	}
	for i, v := range h {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("ridge: code %d of sample %d is %g", i%m, i/m, v)
		}
	}
	hd := make([]float64, len(h))
	for i, v := range h {
		hd[i] = float64(v)
	}
	// G's lower triangle by row blocks: rows r0..r1 of G, columns 0..r1,
	// are H[:, r0:r1]ᵀ H[:, 0:r1].
	tmp := make([]float64, statsBlock*m)
	for r0 := 0; r0 < m; r0 += statsBlock {
		r1 := min(m, r0+statsBlock)
		linalg.Dgemm(true, false, r1-r0, r1, n, 1, hd[r0:], m, hd, m, 0, tmp, r1)
		for i := r0; i < r1; i++ {
			row := s.G[i*(i+1)/2 : i*(i+1)/2+i+1]
			t := tmp[(i-r0)*r1 : (i-r0)*r1+i+1]
			for j := range row {
				row[j] += t[j]
			}
		}
	}
	for i, l := range labels {
		c := s.classRow(l)
		s.Counts[c]++
		row := s.S[c*m : (c+1)*m]
		for j, v := range hd[i*m : (i+1)*m] {
			row[j] += v
		}
	}
	s.N += n
	return nil
}

// Merge adds the statistics o into s (the union of their samples).
func (s *Stats) Merge(o *Stats) error {
	if o.M != s.M {
		return fmt.Errorf("ridge: cannot merge statistics of dimension %d into %d", o.M, s.M)
	}
	if err := o.Check(); err != nil {
		return err
	}
	for i, v := range o.G {
		s.G[i] += v
	}
	for c, l := range o.Labels {
		r := s.classRow(l)
		s.Counts[r] += o.Counts[c]
		dst := s.S[r*s.M : (r+1)*s.M]
		for j, v := range o.S[c*s.M : (c+1)*s.M] {
			dst[j] += v
		}
	}
	s.N += o.N
	return nil
}

// Check verifies that the fields are consistent: sizes, ascending unique
// labels, non-negative counts that sum to N, finite values.
func (s *Stats) Check() error {
	m := s.M
	switch {
	case m <= 0:
		return fmt.Errorf("ridge: statistics: dimension %d", m)
	case len(s.G) != PackedLen(m):
		return fmt.Errorf("ridge: statistics: G has %d values, want %d for m=%d", len(s.G), PackedLen(m), m)
	case len(s.Counts) != len(s.Labels):
		return fmt.Errorf("ridge: statistics: %d counts for %d labels", len(s.Counts), len(s.Labels))
	case len(s.S) != len(s.Labels)*m:
		return fmt.Errorf("ridge: statistics: S has %d values, want %d classes × %d", len(s.S), len(s.Labels), m)
	}
	total := 0
	for i, l := range s.Labels {
		if i > 0 && l <= s.Labels[i-1] {
			return fmt.Errorf("ridge: statistics: labels not strictly ascending at %d (%d after %d)", i, l, s.Labels[i-1])
		}
		if s.Counts[i] < 0 {
			return fmt.Errorf("ridge: statistics: label %d has count %d", l, s.Counts[i])
		}
		total += s.Counts[i]
	}
	if total != s.N {
		return fmt.Errorf("ridge: statistics: class counts sum to %d, n = %d", total, s.N)
	}
	for i := 0; i < m; i++ {
		if d := s.G[i*(i+1)/2+i]; !(d >= 0) || math.IsInf(d, 0) {
			return fmt.Errorf("ridge: statistics: G[%d][%d] = %g is not a finite non-negative diagonal", i, i, d)
		}
	}
	for i, v := range s.G {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("ridge: statistics: G value %d is %g", i, v)
		}
	}
	for i, v := range s.S {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("ridge: statistics: S value %d is %g", i, v)
		}
	}
	return nil
}

// Clone returns a deep copy.
func (s *Stats) Clone() *Stats {
	return &Stats{M: s.M, N: s.N, Labels: slices.Clone(s.Labels), Counts: slices.Clone(s.Counts),
		G: slices.Clone(s.G), S: slices.Clone(s.S)}
}

// GCV returns the GCV score of each λ in grid for ridge regression on the
// samples these statistics summarise, computed from G, S and the class
// counts alone (see GCVFromGram).
func (s *Stats) GCV(ctx context.Context, grid []float64) ([]float64, error) {
	return s.gcv(ctx, grid, bandStatsMin)
}

func (s *Stats) gcv(ctx context.Context, grid []float64, bandMin int) ([]float64, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	m := s.M
	g := make([]float64, m*m)
	for i := 0; i < m; i++ {
		row := s.G[i*(i+1)/2 : i*(i+1)/2+i+1]
		for j, v := range row { // upper triangle: g[j][i] for j <= i
			g[j*m+i] = v
		}
	}
	return gcvStats(ctx, g, m, slices.Clone(s.S), len(s.Labels), float64(s.N), s.N, grid, statsRelErr(m), bandMin)
}
