//go:build !cgo || noopenblas

package linalg

import "errors"

// HaveBandReduction reports whether the band reductions (SsytrdToBand,
// DsytrdToBand and their companions) are available: they need LAPACK's
// two-stage routines, which the pure-Go backend lacks.
const HaveBandReduction = false

var errNoBand = errors.New("linalg: the band reduction needs OpenBLAS (ssytrd_sy2sb); this build uses gonum")

// SsytrdToBand is unavailable in the pure-Go backend.
func SsytrdToBand(n, kd int, a []float32, lda int, ab, tau []float32) error { return errNoBand }

// ApplyBandQT is unavailable in the pure-Go backend.
func ApplyBandQT(n, kd int, a []float32, lda int, tau []float32, nrhs int, bt []float32, ldb int) error {
	return errNoBand
}

// DsytrdToBand is unavailable in the pure-Go backend.
func DsytrdToBand(n, kd int, a []float64, lda int, ab, tau []float64) error { return errNoBand }

// ApplyBandQT64 is unavailable in the pure-Go backend.
func ApplyBandQT64(n, kd int, a []float64, lda int, tau []float64, nrhs int, bt []float64, ldb int) error {
	return errNoBand
}

// DbandEigenvalues is unavailable in the pure-Go backend.
func DbandEigenvalues(n, kd int, ab, w []float64) error { return errNoBand }
