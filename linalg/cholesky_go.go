package linalg

import (
	"math"
	"runtime"

	"github.com/flycl/flycl/internal/parallel"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// This file is compiled in every build: the cgo build uses it for
// DpotrfGo and DpotrsGo only. It makes the pure-Go build use every CPU where the learn spends
// its time: the symmetric rank-k update of the Gram matrix (Ssyrk), the
// Cholesky factorisation (Spotrf) and the solves (Spotrs). gonum's Ssyrk
// and Strsm run on one goroutine, and its Cholesky is float64-only and
// parallel only inside its Dgemm calls. Here the work is cut into tiles
// that gonum's serial kernels compute, and the tiles are spread over the
// CPUs (internal/parallel.Each):
//
//   - syrk: the triangle of C is cut into strips of stripRows rows; a strip
//     is one diagonal block (gonum's syrk) and rectangles of at most
//     tileCols columns (gonum's gemm, which at 64×192 stays serial).
//   - potrf: right-looking blocked Cholesky, A = UᵀU with U upper: for each
//     block column of width cholBlock, factor the diagonal block (potf2,
//     below), solve U11ᵀ U12 = A12 for the block row (a triangular solve
//     per column chunk, in parallel), then update the trailing matrix
//     A22 -= U12ᵀ U12 with the parallel syrk. This is LAPACK's spotrf
//     ordering; the sums round in the working precision as OpenBLAS's do.
//   - potrs: the right-hand sides are independent rows, split over CPUs.

const (
	stripRows = 64  // rows of a syrk strip
	tileCols  = 192 // columns of a syrk rectangle (64×192: gonum's gemm stays serial)
	cholBlock = 96  // width of a Cholesky block column
)

// kernels are gonum's serial BLAS routines of one precision.
type kernels[T float32 | float64] struct {
	gemm func(tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)
	syrk func(ul blas.Uplo, t blas.Transpose, n, k int, alpha T, a []T, lda int, beta T, c []T, ldc int)
	trsm func(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha T, a []T, lda int, b []T, ldb int)
}

func kernels32() kernels[float32] {
	var g gonum.Implementation
	return kernels[float32]{g.Sgemm, g.Ssyrk, g.Strsm}
}

func kernels64() kernels[float64] {
	var g gonum.Implementation
	return kernels[float64]{g.Dgemm, g.Dsyrk, g.Dtrsm}
}

// DpotrfGo is Dpotrf computed in Go (gonum's kernels, on goroutines) in
// every build. A small system, of a few hundred unknowns, costs less this
// way than with OpenBLAS, whose threads, once woken by a call, spin for a
// while after it: on a machine of two cores that spinning takes several
// times the CPU of the factorisation itself.
func DpotrfGo(n int, a []float64, lda int) error {
	checkSym("DpotrfGo", n, lda, len(a))
	if n == 0 {
		return nil
	}
	if o := ppotrf(kernels64(), n, a, lda); o > 0 {
		return &NotPositiveDefiniteError{Order: o}
	}
	return nil
}

// DpotrsGo is Dpotrs computed in Go, for a factor from DpotrfGo (or
// Dpotrf): see DpotrfGo.
func DpotrsGo(n, nrhs int, a []float64, lda int, bt []float64, ldb int) {
	checkSym("DpotrsGo", n, lda, len(a))
	checkRows("DpotrsGo", nrhs, n, ldb, len(bt))
	if n == 0 || nrhs == 0 {
		return
	}
	ppotrs(kernels64(), n, nrhs, a, lda, bt, ldb)
}

func tr(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// tile is one piece of a syrk: rows [i0,i1) × columns [j0,j1) of C; diag
// when it is the diagonal block (i0 == j0, i1 == j1).
type tile struct {
	i0, i1, j0, j1 int
	diag           bool
}

// syrkTiles cuts the upper (or lower) triangle of an n×n matrix into tiles.
func syrkTiles(n int, upper bool) []tile {
	var ts []tile
	for i0 := 0; i0 < n; i0 += stripRows {
		i1 := min(i0+stripRows, n)
		if !upper {
			for j0 := 0; j0 < i0; j0 += tileCols {
				ts = append(ts, tile{i0, i1, j0, min(j0+tileCols, i0), false})
			}
		}
		ts = append(ts, tile{i0, i1, i0, i1, true})
		if upper {
			for j0 := i1; j0 < n; j0 += tileCols {
				ts = append(ts, tile{i0, i1, j0, min(j0+tileCols, n), false})
			}
		}
	}
	return ts
}

// psyrk is Ssyrk/SsyrkLower/Dsyrk on every CPU: C = alpha·op(A)ᵀop(A) +
// beta·C on the upper (lower) triangle, op(A) = A (k×n) when tA, else Aᵀ
// (A n×k). Every element of C belongs to one tile, so beta is applied once.
func psyrk[T float32 | float64](kn kernels[T], upper, tA bool, n, k int, alpha T, a []T, lda int, beta T, c []T, ldc int) {
	ul := blas.Lower
	if upper {
		ul = blas.Upper
	}
	// rows returns the part of a that holds op(A)'s columns from i on.
	rows := func(i int) []T {
		if tA {
			return a[i:]
		}
		return a[i*lda:]
	}
	ts := syrkTiles(n, upper)
	parallel.Each(len(ts), func(t int) {
		x := ts[t]
		cc := c[x.i0*ldc+x.j0:]
		if x.diag {
			kn.syrk(ul, tr(tA), x.i1-x.i0, k, alpha, rows(x.i0), lda, beta, cc, ldc)
			return
		}
		// C_IJ = alpha·op(A)_Iᵀ op(A)_J: (Aᵀ)_I A_J when tA, A_I (A_J)ᵀ else.
		tx, ty := blas.Trans, blas.NoTrans
		if !tA {
			tx, ty = blas.NoTrans, blas.Trans
		}
		kn.gemm(tx, ty, x.i1-x.i0, x.j1-x.j0, k, alpha, rows(x.i0), lda, rows(x.j0), lda, beta, cc, ldc)
	})
}

// ppotrf overwrites the upper triangle of the n×n symmetric positive
// definite a with U, a = UᵀU (right-looking, blocked, parallel). It
// returns the order of the first leading minor found not positive
// definite (NaN included), or 0.
func ppotrf[T float32 | float64](kn kernels[T], n int, a []T, lda int) int {
	for j := 0; j < n; j += cholBlock {
		jb := min(cholBlock, n-j)
		if o := potf2(jb, a[j*lda+j:], lda); o > 0 {
			return j + o
		}
		r := n - j - jb
		if r == 0 {
			break
		}
		u11 := a[j*lda+j:]
		a12 := a[j*lda+j+jb:]
		// U12 = U11⁻ᵀ A12, column chunks in parallel.
		chunks := (r + tileCols - 1) / tileCols
		parallel.Each(chunks, func(c int) {
			c0 := c * tileCols
			kn.trsm(blas.Left, blas.Upper, blas.Trans, blas.NonUnit, jb, min(tileCols, r-c0), 1, u11, lda, a12[c0:], lda)
		})
		// A22 -= U12ᵀ U12 (upper triangle).
		psyrk(kn, true, true, r, jb, -1, a12, lda, 1, a[(j+jb)*lda+j+jb:], lda)
	}
	return 0
}

// potf2 is the unblocked Cholesky of a jb×jb diagonal block (upper,
// row-major): row i of U from the rows above it. It returns the order of
// the first non-positive (or NaN) pivot, or 0.
func potf2[T float32 | float64](jb int, a []T, lda int) int {
	for i := 0; i < jb; i++ {
		d := a[i*lda+i]
		for p := 0; p < i; p++ {
			d -= a[p*lda+i] * a[p*lda+i]
		}
		if !(d > 0) {
			return i + 1
		}
		d = T(math.Sqrt(float64(d)))
		a[i*lda+i] = d
		row := a[i*lda : i*lda+jb]
		for p := 0; p < i; p++ {
			u := a[p*lda+i]
			if u == 0 {
				continue
			}
			above := a[p*lda : p*lda+jb]
			for c := i + 1; c < jb; c++ {
				row[c] -= u * above[c]
			}
		}
		for c := i + 1; c < jb; c++ {
			row[c] /= d
		}
	}
	return 0
}

// ppotrs solves UᵀU x = b for the nrhs rows of bt (see Spotrs), the rows
// split over the CPUs.
func ppotrs[T float32 | float64](kn kernels[T], n, nrhs int, a []T, lda int, bt []T, ldb int) {
	procs := runtime.GOMAXPROCS(0)
	per := max(1, (nrhs+procs-1)/procs)
	chunks := (nrhs + per - 1) / per
	parallel.Each(chunks, func(c int) {
		r0 := c * per
		rows := min(per, nrhs-r0)
		b := bt[r0*ldb:]
		kn.trsm(blas.Right, blas.Upper, blas.NoTrans, blas.NonUnit, rows, n, 1, a, lda, b, ldb)
		kn.trsm(blas.Right, blas.Upper, blas.Trans, blas.NonUnit, rows, n, 1, a, lda, b, ldb)
	})
}
