package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// sparseRows draws m rows of p distinct ascending columns in [0,d) with
// N(0,1) values.
func sparseRows(r *rand.Rand, m, p, d int) ([]int32, []float32) {
	cols, vals := make([]int32, 0, m*p), make([]float32, 0, m*p)
	for range m {
		cs := r.Perm(d)[:p]
		slices.Sort(cs)
		for _, c := range cs {
			cols = append(cols, int32(c))
			vals = append(vals, float32(r.NormFloat64()))
		}
	}
	return cols, vals
}

// TestSgatherRows: every element against a float64 sum of the same
// products (each product and partial sum rounded to float32 along the way:
// the error is below p·2⁻²³ times the sum of the products' magnitudes),
// and, bit for bit, against the Go loop, whichever kernel is in use, for
// block sizes that fall in every lane layout (full vectors, a tail, more
// than one pass of 32).
func TestSgatherRows(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, sz := range [][3]int{{1, 3, 1}, {3, 5, 4}, {8, 7, 9}, {13, 11, 30}, {20, 40, 300}, {32, 9, 17}, {37, 6, 50}, {64, 4, 8}} {
		n, m, p := sz[0], sz[1], sz[2]
		t.Run(fmt.Sprintf("n=%d,m=%d,p=%d", n, m, p), func(t *testing.T) {
			d := p + 7
			ldx, ldh := n+3, m+2
			cols, vals := sparseRows(r, m, p, d)
			xt := to32(randMat(r, d, ldx))
			h, want := make([]float32, n*ldh), make([]float32, n*ldh)
			for i := range h {
				h[i] = float32(math.NaN()) // every element must be written
			}
			copy(want, h)
			SgatherRows(n, m, p, cols, vals, xt, ldx, h, ldh)
			sgatherRowsGo(n, m, p, cols, vals, xt, ldx, want, ldh)
			for rr := range n {
				for j := range m {
					got := h[rr*ldh+j]
					if math.Float32bits(got) != math.Float32bits(want[rr*ldh+j]) {
						t.Fatalf("h[%d][%d] = %v, the Go loop %v (kernel %s)", rr, j, got, want[rr*ldh+j], SparseKernel())
					}
					var ref, mag float64
					for i := range p {
						x := float64(vals[j*p+i]) * float64(xt[int(cols[j*p+i])*ldx+rr])
						ref += x
						mag += math.Abs(x)
					}
					if tol := float64(p) * 0x1p-23 * mag; math.Abs(float64(got)-ref) > tol {
						t.Fatalf("h[%d][%d] = %v, float64 %v (tolerance %g)", rr, j, got, ref, tol)
					}
				}
			}
		})
	}
}

// TestDgatherSparse: products of float32 values are exact in float64, so
// the sums equal, bit for bit, the Go loop, and a float64 sum in the same
// order computed here (the reference).
func TestDgatherSparse(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, nb := range []int{1, 3, 4, 5, 20, 32, 33, 70} {
		t.Run(fmt.Sprint("nb=", nb), func(t *testing.T) {
			d, nnz, ldb := 300, 120, nb+1
			cols, vals := sparseRows(r, 1, nnz, d)
			buf := make([]float32, d*ldb)
			for i := range buf {
				buf[i] = float32(r.NormFloat64())
			}
			s, want := make([]float64, nb), make([]float64, nb)
			for i := range s {
				s[i] = math.NaN()
			}
			DgatherSparse(cols, vals, buf, ldb, s)
			dgatherSparseGo(cols, vals, buf, ldb, want)
			for i := range nb {
				var ref float64
				for q, c := range cols {
					ref += float64(buf[int(c)*ldb+i]) * float64(vals[q])
				}
				if math.Float64bits(s[i]) != math.Float64bits(want[i]) || s[i] != ref {
					t.Fatalf("s[%d] = %v, Go loop %v, reference %v (kernel %s)", i, s[i], want[i], ref, SparseKernel())
				}
			}
		})
	}
}

// TestDscatterSparse: the rows of acc after the scatter equal, bit for
// bit, the Go loop and a reference computed term by term here; entries
// between the rows and past len(a) in each row are left as they were.
func TestDscatterSparse(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, g := range []int{1, 2, 4, 5, 20, 64} {
		t.Run(fmt.Sprint("g=", g), func(t *testing.T) {
			lo, hi, lda := 40, 200, g+3
			cols, vals := sparseRows(r, 1, 60, hi-lo)
			for i := range cols {
				cols[i] += int32(lo)
			}
			a := randMat(r, 1, g)
			acc := randMat(r, hi-lo, lda)
			want, ref := slices.Clone(acc), slices.Clone(acc)
			DscatterSparse(cols, vals, lo, a, acc, lda)
			dscatterSparseGo(cols, vals, lo, a, want, lda)
			for q, c := range cols {
				for k := range g {
					ref[(int(c)-lo)*lda+k] += float64(a[k] * float64(vals[q])) // rounded, never fused
				}
			}
			for i := range acc {
				if math.Float64bits(acc[i]) != math.Float64bits(want[i]) || acc[i] != ref[i] {
					t.Fatalf("acc[%d] = %v, Go loop %v, reference %v (kernel %s)", i, acc[i], want[i], ref[i], SparseKernel())
				}
			}
		})
	}
}

// TestSparseBounds: a column outside the rows given panics (before any
// memory past them is read or written), with either kernel.
func TestSparseBounds(t *testing.T) {
	panics := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic for a column out of bounds", name)
			}
		}()
		f()
	}
	xt := make([]float32, 10*4)
	h := make([]float32, 4*2)
	panics("SgatherRows", func() { SgatherRows(4, 2, 1, []int32{3, 10}, []float32{1, 1}, xt, 4, h, 2) })
	panics("SgatherRows negative", func() { SgatherRows(4, 1, 1, []int32{-1}, []float32{1}, xt, 4, h, 2) })
	buf := make([]float32, 10*4)
	panics("DgatherSparse", func() { DgatherSparse([]int32{2, 10}, []float32{1, 1}, buf, 4, make([]float64, 4)) })
	acc := make([]float64, 10*4)
	panics("DscatterSparse", func() { DscatterSparse([]int32{5, 15}, []float32{1, 1}, 5, make([]float64, 4), acc, 4) })
	panics("DscatterSparse below", func() { DscatterSparse([]int32{4}, []float32{1}, 5, make([]float64, 4), acc, 4) })
}
