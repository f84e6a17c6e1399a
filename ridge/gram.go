package ridge

import "github.com/flycl/flycl/linalg"

// AddGram adds hᵀh, for the n×m row-major h, to a symmetric m×m matrix
// kept the way Accumulator keeps G: its strict lower triangle in g and its
// diagonal in diag, so that g's diagonal and upper triangle stay free for
// the caller's work (a Cholesky factor, say). One ssyrk does the update.
func AddGram(g, diag []float32, h []float32, n, m int) {
	if n == 0 {
		return
	}
	for i := 0; i < m; i++ {
		g[i*m+i] = diag[i]
	}
	linalg.SsyrkLower(true, m, n, 1, h, m, 1, g, m)
	for i := 0; i < m; i++ {
		diag[i] = g[i*m+i]
	}
}
