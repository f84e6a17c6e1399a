//go:build cgo && !noopenblas

package linalg

/*
#include <stddef.h>
void sgetrf_(int*, int*, float*, int*, int*, int*);
void sgetrs_(char*, int*, int*, float*, int*, int*, float*, int*, int*, size_t);
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Sgetrf overwrites the general n×n row-major a with its LU factorisation
// with partial pivoting (of aᵀ, as Fortran sees row-major storage; Sgetrs
// accounts for it). ipiv receives the n pivots. It costs (2/3)n³ flops,
// twice Spotrf, and is here to measure that (flycl bench components).
func Sgetrf(n int, a []float32, lda int, ipiv []int32) error {
	checkRows("Sgetrf", n, n, lda, len(a))
	if len(ipiv) < n {
		panic("linalg.Sgetrf: ipiv too short")
	}
	if n == 0 {
		return nil
	}
	cn, clda, info := C.int(n), C.int(lda), C.int(0)
	C.sgetrf_(&cn, &cn, fptr(a), &clda, (*C.int)(unsafe.Pointer(&ipiv[0])), &info)
	if info > 0 {
		return fmt.Errorf("linalg: Sgetrf: matrix is singular (U[%d][%d] = 0)", info, info)
	}
	return nil
}

// Sgetrs solves a x = b for each of the nrhs right-hand sides stored as the
// rows of bt (nrhs×n), given the factorisation from Sgetrf.
func Sgetrs(n, nrhs int, a []float32, lda int, ipiv []int32, bt []float32, ldb int) {
	checkRows("Sgetrs", n, n, lda, len(a))
	checkRows("Sgetrs", nrhs, n, ldb, len(bt))
	if n == 0 || nrhs == 0 {
		return
	}
	trans := C.char('T') // Fortran holds aᵀ
	cn, cr, clda, cldb, info := C.int(n), C.int(nrhs), C.int(lda), C.int(ldb), C.int(0)
	C.sgetrs_(&trans, &cn, &cr, fptr(a), &clda, (*C.int)(unsafe.Pointer(&ipiv[0])), fptr(bt), &cldb, &info, 1)
	if info != 0 {
		panic(fmt.Sprintf("linalg.Sgetrs: info=%d", info))
	}
}
