package flycl

import "github.com/flycl/flycl/linalg"

// scoreRows computes out (n×nc) = h (n×m) Cᵀ, C being nc×m.
func scoreRows(h []float32, n, m int, coef []float32, nc int, out []float32) {
	linalg.Sgemm(false, true, n, nc, m, 1, h, m, coef, m, 0, out, nc)
}
