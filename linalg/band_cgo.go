//go:build cgo && !noopenblas

package linalg

/*
#include <stddef.h>
void ssytrd_sy2sb_(char*, int*, int*, float*, int*, float*, int*, float*, float*, int*, int*, size_t);
void sormqr_(char*, char*, int*, int*, int*, float*, int*, float*, float*, int*, float*, int*, int*, size_t, size_t);
void dsytrd_sy2sb_(char*, int*, int*, double*, int*, double*, int*, double*, double*, int*, int*, size_t);
void dormqr_(char*, char*, int*, int*, int*, double*, int*, double*, double*, int*, double*, int*, int*, size_t, size_t);
void dsbev_2stage_(char*, char*, int*, int*, double*, int*, double*, double*, int*, double*, int*, int*, size_t, size_t);
*/
import "C"

import "fmt"

// HaveBandReduction reports whether the band reductions (SsytrdToBand,
// DsytrdToBand and their companions) are available: they need LAPACK's
// two-stage routines, which the pure-Go backend lacks.
const HaveBandReduction = true

// SsytrdToBand reduces the symmetric n×n row-major a (every element set)
// to a symmetric band matrix B = Qᵀ a Q with kd sub-diagonals, by LAPACK's
// blocked first stage of the two-stage tridiagonal reduction
// (ssytrd_sy2sb, BLAS-3). Band element B[i][j] (j ≤ i ≤ j+kd) is written
// to ab[j*(kd+1) + i-j]; ab needs n*(kd+1) values. Q is left in a and tau
// (n-kd values) for ApplyBandQT. Only the upper triangle of a (j >= i,
// LAPACK's lower triangle of the column-major matrix) is read and
// overwritten; the strict lower triangle is left as it was.
func SsytrdToBand(n, kd int, a []float32, lda int, ab, tau []float32) error {
	checkSym("SsytrdToBand", n, lda, len(a))
	if kd < 1 || kd >= n {
		return fmt.Errorf("linalg: SsytrdToBand: kd=%d outside [1, n=%d)", kd, n)
	}
	if len(ab) < n*(kd+1) || len(tau) < n-kd {
		panic("linalg.SsytrdToBand: ab or tau too short")
	}
	uplo := C.char('L') // a is symmetric: Fortran's lower triangle is ours
	cn, ckd, clda, cldab, info := C.int(n), C.int(kd), C.int(lda), C.int(kd+1), C.int(0)
	lwork := C.int(-1)
	var wq C.float
	C.ssytrd_sy2sb_(&uplo, &cn, &ckd, fptr(a), &clda, fptr(ab), &cldab, fptr(tau), &wq, &lwork, &info, 1)
	if info != 0 {
		return fmt.Errorf("linalg: ssytrd_sy2sb workspace query: info=%d", info)
	}
	work := make([]float32, max(int(wq), 1))
	lwork = C.int(len(work))
	C.ssytrd_sy2sb_(&uplo, &cn, &ckd, fptr(a), &clda, fptr(ab), &cldab, fptr(tau), fptr(work), &lwork, &info, 1)
	if info != 0 {
		return fmt.Errorf("linalg: ssytrd_sy2sb: info=%d", info)
	}
	return nil
}

// ApplyBandQT overwrites each of the nrhs rows of bt (nrhs×n, leading
// dimension ldb) with Qᵀ times it, Q being the orthogonal matrix of
// SsytrdToBand(n, kd, a, ...): one sormqr per panel of kd reflectors.
func ApplyBandQT(n, kd int, a []float32, lda int, tau []float32, nrhs int, bt []float32, ldb int) error {
	checkSym("ApplyBandQT", n, lda, len(a))
	checkRows("ApplyBandQT", nrhs, n, ldb, len(bt))
	if nrhs == 0 {
		return nil
	}
	side, trans := C.char('L'), C.char('T')
	for i := 0; i+kd < n; i += kd {
		pn, pk := n-i-kd, min(n-i-kd, kd)
		cm, cnr, ck, clda, cldc, info := C.int(pn), C.int(nrhs), C.int(pk), C.int(lda), C.int(ldb), C.int(0)
		// The panel's reflectors sit at Fortran A(i+kd, i) = a[i*lda + i+kd];
		// the rows it acts on at C(i+kd, 1) = bt[i+kd].
		lwork := C.int(-1)
		var wq C.float
		C.sormqr_(&side, &trans, &cm, &cnr, &ck, fptr(a[i*lda+i+kd:]), &clda, fptr(tau[i:]), fptr(bt[i+kd:]), &cldc, &wq, &lwork, &info, 1, 1)
		work := make([]float32, max(int(wq), 1))
		lwork = C.int(len(work))
		C.sormqr_(&side, &trans, &cm, &cnr, &ck, fptr(a[i*lda+i+kd:]), &clda, fptr(tau[i:]), fptr(bt[i+kd:]), &cldc, fptr(work), &lwork, &info, 1, 1)
		if info != 0 {
			return fmt.Errorf("linalg: sormqr (panel at %d): info=%d", i, info)
		}
	}
	return nil
}

// DsytrdToBand is SsytrdToBand in float64 (LAPACK's dsytrd_sy2sb), with
// the same layouts; Q is left in a and tau for ApplyBandQT64.
func DsytrdToBand(n, kd int, a []float64, lda int, ab, tau []float64) error {
	checkSym("DsytrdToBand", n, lda, len(a))
	if kd < 1 || kd >= n {
		return fmt.Errorf("linalg: DsytrdToBand: kd=%d outside [1, n=%d)", kd, n)
	}
	if len(ab) < n*(kd+1) || len(tau) < n-kd {
		panic("linalg.DsytrdToBand: ab or tau too short")
	}
	uplo := C.char('L')
	cn, ckd, clda, cldab, info := C.int(n), C.int(kd), C.int(lda), C.int(kd+1), C.int(0)
	lwork := C.int(-1)
	var wq C.double
	C.dsytrd_sy2sb_(&uplo, &cn, &ckd, dptr(a), &clda, dptr(ab), &cldab, dptr(tau), &wq, &lwork, &info, 1)
	if info != 0 {
		return fmt.Errorf("linalg: dsytrd_sy2sb workspace query: info=%d", info)
	}
	work := make([]float64, max(int(wq), 1))
	lwork = C.int(len(work))
	C.dsytrd_sy2sb_(&uplo, &cn, &ckd, dptr(a), &clda, dptr(ab), &cldab, dptr(tau), dptr(work), &lwork, &info, 1)
	if info != 0 {
		return fmt.Errorf("linalg: dsytrd_sy2sb: info=%d", info)
	}
	return nil
}

// ApplyBandQT64 is ApplyBandQT in float64, for the Q of DsytrdToBand.
func ApplyBandQT64(n, kd int, a []float64, lda int, tau []float64, nrhs int, bt []float64, ldb int) error {
	checkSym("ApplyBandQT64", n, lda, len(a))
	checkRows("ApplyBandQT64", nrhs, n, ldb, len(bt))
	if nrhs == 0 {
		return nil
	}
	side, trans := C.char('L'), C.char('T')
	for i := 0; i+kd < n; i += kd {
		pn, pk := n-i-kd, min(n-i-kd, kd)
		cm, cnr, ck, clda, cldc, info := C.int(pn), C.int(nrhs), C.int(pk), C.int(lda), C.int(ldb), C.int(0)
		lwork := C.int(-1)
		var wq C.double
		C.dormqr_(&side, &trans, &cm, &cnr, &ck, dptr(a[i*lda+i+kd:]), &clda, dptr(tau[i:]), dptr(bt[i+kd:]), &cldc, &wq, &lwork, &info, 1, 1)
		work := make([]float64, max(int(wq), 1))
		lwork = C.int(len(work))
		C.dormqr_(&side, &trans, &cm, &cnr, &ck, dptr(a[i*lda+i+kd:]), &clda, dptr(tau[i:]), dptr(bt[i+kd:]), &cldc, dptr(work), &lwork, &info, 1, 1)
		if info != 0 {
			return fmt.Errorf("linalg: dormqr (panel at %d): info=%d", i, info)
		}
	}
	return nil
}

// DbandEigenvalues sets w (n values, ascending) to the eigenvalues of the
// symmetric band matrix ab (n×n, kd sub-diagonals, in DsytrdToBand's
// layout), by LAPACK's dsbev_2stage without vectors (the bulge-chasing
// second stage of the two-stage reduction, then dsterf). ab is destroyed.
func DbandEigenvalues(n, kd int, ab, w []float64) error {
	if len(ab) < n*(kd+1) || len(w) < n {
		panic("linalg.DbandEigenvalues: ab or w too short")
	}
	if n == 0 {
		return nil
	}
	jobz, uplo := C.char('N'), C.char('L')
	cn, ckd, cldab, cldz, info := C.int(n), C.int(kd), C.int(kd+1), C.int(1), C.int(0)
	var z C.double
	lwork := C.int(-1)
	var wq C.double
	C.dsbev_2stage_(&jobz, &uplo, &cn, &ckd, dptr(ab), &cldab, dptr(w), &z, &cldz, &wq, &lwork, &info, 1, 1)
	if info != 0 {
		return fmt.Errorf("linalg: dsbev_2stage workspace query: info=%d", info)
	}
	work := make([]float64, max(int(wq), 1))
	lwork = C.int(len(work))
	C.dsbev_2stage_(&jobz, &uplo, &cn, &ckd, dptr(ab), &cldab, dptr(w), &z, &cldz, dptr(work), &lwork, &info, 1, 1)
	if info != 0 {
		return fmt.Errorf("linalg: dsbev_2stage: info=%d", info)
	}
	return nil
}
