package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSdotRowsMatchesFloat64 compares SdotRows with a float64 loop. Each
// element is a sum of k products rounded to float32 along the way: its
// error is below k·2⁻²³ times the sum of the products' magnitudes (a
// loose form of the standard bound for recursive and pairwise sums).
func TestSdotRowsMatchesFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, sz := range [][3]int{{1, 1, 1}, {1, 4, 8}, {2, 4, 16}, {3, 5, 7}, {7, 13, 37}, {5, 9, 512}, {4, 8, 0}} {
		n, m, k := sz[0], sz[1], sz[2]
		lda, ldb, ldc := k+3, k+1, m+2
		a := to32(randMat(r, n, lda))
		b := to32(randMat(r, m, ldb))
		c := make([]float32, n*ldc)
		for i := range c {
			c[i] = float32(math.NaN()) // every element must be written
		}
		SdotRows(n, m, k, a, lda, b, ldb, c, ldc)
		for i := 0; i < n; i++ {
			for j := 0; j < m; j++ {
				var want, mag float64
				for l := 0; l < k; l++ {
					p := float64(a[i*lda+l]) * float64(b[j*ldb+l])
					want += p
					mag += math.Abs(p)
				}
				got := float64(c[i*ldc+j])
				if tol := float64(k) * 0x1p-23 * mag; math.Abs(got-want) > tol || math.IsNaN(got) {
					t.Errorf("n=%d m=%d k=%d: c[%d][%d] = %v, float64 %v (tolerance %g)", n, m, k, i, j, got, want, tol)
				}
			}
		}
	}
}

// TestSdotRowsRowIndependent: an element's bits depend on its two rows
// alone. Every element of a product with odd sizes (so that elements fall
// in full blocks and in every kind of edge) equals, bit for bit, the same
// rows multiplied alone, copied to another place in memory, and the
// product of row subsets taken in another order.
func TestSdotRowsRowIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, k := range []int{5, 64, 300, 517} {
		t.Run(fmt.Sprint("k=", k), func(t *testing.T) {
			n, m := 9, 23
			a := to32(randMat(r, n, k))
			b := to32(randMat(r, m, k))
			c := make([]float32, n*m)
			SdotRows(n, m, k, a, k, b, k, c, m)
			for i := 0; i < n; i++ {
				for j := 0; j < m; j++ {
					// One element alone, its rows at an odd offset of a fresh buffer.
					buf := make([]float32, 2*k+2)
					x, w := buf[1:1+k], buf[k+2:]
					copy(x, a[i*k:(i+1)*k])
					copy(w, b[j*k:(j+1)*k])
					one := []float32{0}
					SdotRows(1, 1, k, x, k, w, k, one, 1)
					if math.Float32bits(one[0]) != math.Float32bits(c[i*m+j]) {
						t.Fatalf("c[%d][%d]: %v in the %d×%d product, %v alone", i, j, c[i*m+j], n, m, one[0])
					}
				}
			}
			// Rows reversed, in blocks of other sizes.
			ra, rb := make([]float32, n*k), make([]float32, m*k)
			for i := 0; i < n; i++ {
				copy(ra[i*k:], a[(n-1-i)*k:(n-i)*k])
			}
			for j := 0; j < m; j++ {
				copy(rb[j*k:], b[(m-1-j)*k:(m-j)*k])
			}
			for _, nn := range []int{1, 2, 3, n} {
				rc := make([]float32, nn*m)
				SdotRows(nn, m, k, ra, k, rb, k, rc, m)
				for i := 0; i < nn; i++ {
					for j := 0; j < m; j++ {
						if got, want := rc[i*m+j], c[(n-1-i)*m+(m-1-j)]; math.Float32bits(got) != math.Float32bits(want) {
							t.Fatalf("reversed rows, n=%d: element (%d,%d) is %v, %v in order", nn, i, j, got, want)
						}
					}
				}
			}
		})
	}
}

func TestSdotRowsBadDimensionsPanic(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a too-short c")
		}
	}()
	SdotRows(2, 2, 3, make([]float32, 6), 3, make([]float32, 6), 3, make([]float32, 3), 2)
}

// BenchmarkSdotRows is the projection of one to 64 samples by a dense
// 10000×512 W, next to Sgemm (the threads OpenBLAS is set to).
func BenchmarkSdotRows(b *testing.B) {
	const m, k = 10000, 512
	r := rand.New(rand.NewPCG(5, 6))
	w := to32(randMat(r, m, k))
	for _, n := range []int{1, 4, 16, 64} {
		x := to32(randMat(r, n, k))
		c := make([]float32, n*m)
		b.Run(fmt.Sprintf("dotrows/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				SdotRows(n, m, k, x, k, w, k, c, m)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/sample")
		})
		b.Run(fmt.Sprintf("sgemm/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				Sgemm(false, true, n, m, k, 1, x, k, w, k, 0, c, m)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/sample")
		})
	}
}
