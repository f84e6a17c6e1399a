package flycl

import (
	"fmt"

	"github.com/flycl/flycl/linalg"
)

// scoreRows computes out (n×nc) = h (n×m) Cᵀ, C being nc×m.
func scoreRows(h []float32, n, m int, coef []float32, nc int, out []float32) {
	linalg.Sgemm(false, true, n, nc, m, 1, h, m, coef, m, 0, out, nc)
}

// checkScores returns an error naming the first score of out (rows of nc
// class scores, the first being sample first) that is not finite: the
// features were too large for the float32 expansion (about 3e38 overflows
// it), and such a score ranks nothing.
func checkScores(out []float32, nc, first int, name func(c int) string) error {
	if i := firstNonFinite(out); i >= 0 {
		return fmt.Errorf("%w: the score of sample %d for class %s is %v, not a finite number: the features are too large for this model's float32 arithmetic (scale them down)",
			ErrTooLarge, first+i/nc, name(i%nc), out[i])
	}
	return nil
}
