//go:build !cgo || noopenblas

package linalg

import "errors"

// HaveBandReduction reports whether SsytrdToBand is available (it needs
// LAPACK's ssytrd_sy2sb, which the pure-Go backend lacks).
const HaveBandReduction = false

var errNoBand = errors.New("linalg: the band reduction needs OpenBLAS (ssytrd_sy2sb); this build uses gonum")

// SsytrdToBand is unavailable in the pure-Go backend.
func SsytrdToBand(n, kd int, a []float32, lda int, ab, tau []float32) error { return errNoBand }

// ApplyBandQT is unavailable in the pure-Go backend.
func ApplyBandQT(n, kd int, a []float32, lda int, tau []float32, nrhs int, bt []float32, ldb int) error {
	return errNoBand
}
