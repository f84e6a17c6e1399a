package ridge

import (
	"fmt"
	"slices"

	"github.com/flycl/flycl/linalg"
)

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
