// Package linalg provides the dense linear algebra that Fly-CL needs —
// matrix products, symmetric rank-k updates, Cholesky factorisation and
// solves, triangular inversion and symmetric eigen-decomposition — on
// row-major float32 and float64 slices.
//
// With cgo enabled (the default) every routine calls OpenBLAS and its
// bundled LAPACK, but for two: Dsterf is gonum's on every backend, and
// SdotRows is the package's own (below). Built with the tag noopenblas (go
// build -tags noopenblas), or with CGO_ENABLED=0, the package falls back
// to gonum's pure-Go BLAS and LAPACK, which give the same results to
// rounding but are slower; there the symmetric rank-k updates (Ssyrk,
// SsyrkLower, Dsyrk), the Cholesky factorisations (Spotrf, Dpotrf) and
// solves (Spotrs, Dpotrs) are blocked and spread over GOMAXPROCS
// goroutines (gonum's kernels on tiles), so that a learn uses every core
// (docs/INSTALL.md measures them against OpenBLAS). The JPEG decoder is
// chosen separately (imageio's noturbojpeg tag); Backend names the one in
// use.
//
// SdotRows is a routine of its own: a product a bᵀ whose every
// element is computed by one fixed sequence of operations, so that a row
// of the result has the same bits whatever the other rows of the call (a
// BLAS gemm rounds an element by its place in the kernel's blocks). It is
// C with AVX2 and FMA intrinsics where the CPU has them (portable C
// otherwise, Go without cgo) and never starts threads; flycl.Predictor
// scores with it. So are the sparse kernels SgatherRows, DgatherSparse
// and DscatterSparse (the sparse projection's product, and the dual ridge
// form's kernel rows and W = HᵀA): sums over the non-zeros of sparse rows
// in their order, C with AVX2 intrinsics where the CPU has them and the
// same bits as their Go loops (no fused multiply-add), on the calling
// goroutine only. DpotrfGo and DpotrsGo are the Cholesky factorisation
// and solves in Go in every build, for systems small enough that waking
// OpenBLAS's threads costs more than the work.
//
// Conventions. All matrices are row-major with an explicit leading
// dimension (the distance between the starts of consecutive rows). A
// symmetric matrix is referenced through its upper triangle (elements
// a[i*lda+j] with j >= i); the lower triangle is neither read nor written.
// A Cholesky factor is returned as the upper-triangular U with A = Uᵀ U,
// stored in the upper triangle of A. Right-hand sides of solves are stored
// one per row ("transposed"): an n×nrhs system is passed as an nrhs×n
// row-major slice, which is the natural layout for per-class weight vectors.
package linalg

import "fmt"

// NotPositiveDefiniteError reports that a Cholesky factorisation failed
// because the leading minor of order Order is not positive definite.
type NotPositiveDefiniteError struct{ Order int }

func (e *NotPositiveDefiniteError) Error() string {
	return fmt.Sprintf("linalg: matrix is not positive definite (leading minor of order %d)", e.Order)
}

// Backend names the implementation in use: "openblas" or "gonum".
func Backend() string { return backend }

// BackendVersion describes the implementation in use: OpenBLAS's build
// configuration (its version and the CPU core it runs for), or
// "pure Go (gonum)" in a build without OpenBLAS.
func BackendVersion() string { return backendVersion() }

func checkSym(name string, n, lda, length int) {
	if n < 0 || lda < max(1, n) || (n > 0 && length < (n-1)*lda+n) {
		panic(fmt.Sprintf("linalg.%s: bad dimensions n=%d lda=%d len=%d", name, n, lda, length))
	}
}

func checkRows(name string, rows, cols, ld, length int) {
	if rows < 0 || cols < 0 || ld < max(1, cols) || (rows > 0 && length < (rows-1)*ld+cols) {
		panic(fmt.Sprintf("linalg.%s: bad dimensions rows=%d cols=%d ld=%d len=%d", name, rows, cols, ld, length))
	}
}

// symvRows: SsymmLowerRight with at most this many rows in b runs one
// matrix-vector product per row where the backend's is faster (OpenBLAS).
const symvRows = 4
