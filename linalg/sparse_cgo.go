//go:build cgo && !noopenblas

package linalg

/*
#include <stddef.h>
#include <stdint.h>

// AVX2 kernels of the sparse sums (see sparse.go): the samples (or
// classes) of a block side by side in the lanes of a vector, each lane
// summed term after term in the order of the non-zeros with a multiply
// then an add. The functions are compiled for AVX2 without FMA, so the
// compiler cannot fuse them: each lane does what the Go loop does.

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define FLYCL_SPARSE_X86 1

__attribute__((target("avx2")))
static __m256i flycl_mask8(int rem) {
	const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	return _mm256_cmpgt_epi32(_mm256_set1_epi32(rem), idx);
}

__attribute__((target("avx2")))
static __m256i flycl_mask4(int rem) {
	const __m256i idx = _mm256_setr_epi64x(0, 1, 2, 3);
	return _mm256_cmpgt_epi64(_mm256_set1_epi64x(rem), idx);
}

__attribute__((target("avx2")))
static int sgather_avx2(int n, int m, int p, const int32_t *cols, const float *vals, const float *xt, int d, int ldx, float *h, int ldh) {
	float out[32];
	for (int r0 = 0; r0 < n; r0 += 32) {
		const int nr = n - r0 < 32 ? n - r0 : 32;
		const int full = nr >> 3, rem = nr & 7;
		const __m256i mask = flycl_mask8(rem);
		const float *x0 = xt + r0;
		for (int j = 0; j < m; j++) {
			const int32_t *c = cols + (size_t)j * p;
			const float *v = vals + (size_t)j * p;
			__m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, at = a0;
			for (int i = 0; i < p; i++) {
				if ((uint32_t)c[i] >= (uint32_t)d) return 0;
				const float *x = x0 + (size_t)c[i] * ldx;
				const __m256 w = _mm256_set1_ps(v[i]);
				if (full > 0) a0 = _mm256_add_ps(a0, _mm256_mul_ps(w, _mm256_loadu_ps(x)));
				if (full > 1) a1 = _mm256_add_ps(a1, _mm256_mul_ps(w, _mm256_loadu_ps(x + 8)));
				if (full > 2) a2 = _mm256_add_ps(a2, _mm256_mul_ps(w, _mm256_loadu_ps(x + 16)));
				if (full > 3) a3 = _mm256_add_ps(a3, _mm256_mul_ps(w, _mm256_loadu_ps(x + 24)));
				if (rem) at = _mm256_add_ps(at, _mm256_mul_ps(w, _mm256_maskload_ps(x + 8 * full, mask)));
			}
			_mm256_storeu_ps(out, a0);
			_mm256_storeu_ps(out + 8, a1);
			_mm256_storeu_ps(out + 16, a2);
			_mm256_storeu_ps(out + 24, a3);
			if (rem) _mm256_storeu_ps(out + 8 * full, at);
			float *hj = h + (size_t)r0 * ldh + j;
			for (int r = 0; r < nr; r++) {
				hj[(size_t)r * ldh] = out[r];
			}
		}
	}
	return 1;
}

__attribute__((target("avx2")))
static int dgather_avx2(int nb, int nnz, const int32_t *cols, const float *vals, const float *buf, int rows, int ldb, double *s) {
	for (int r0 = 0; r0 < nb; r0 += 32) {
		const int nr = nb - r0 < 32 ? nb - r0 : 32;
		const int full = nr >> 2, rem = nr & 3;
		const __m256i mask = flycl_mask4(rem);
		__m256d a[8], at = _mm256_setzero_pd();
		for (int q = 0; q < 8; q++) a[q] = _mm256_setzero_pd();
		const __m128i mask32 = _mm_cmpgt_epi32(_mm_set1_epi32(rem), _mm_setr_epi32(0, 1, 2, 3));
		const float *b0 = buf + r0;
		for (int t = 0; t < nnz; t++) {
			if ((uint32_t)cols[t] >= (uint32_t)rows) return 0;
			const float *x = b0 + (size_t)cols[t] * ldb;
			const __m256d w = _mm256_set1_pd((double)vals[t]);
			for (int q = 0; q < full; q++) {
				a[q] = _mm256_add_pd(a[q], _mm256_mul_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + 4 * q)), w));
			}
			if (rem) at = _mm256_add_pd(at, _mm256_mul_pd(_mm256_cvtps_pd(_mm_maskload_ps(x + 4 * full, mask32)), w));
		}
		for (int q = 0; q < full; q++) _mm256_storeu_pd(s + r0 + 4 * q, a[q]);
		if (rem) _mm256_maskstore_pd(s + r0 + 4 * full, mask, at);
	}
	return 1;
}

__attribute__((target("avx2")))
static int dscatter_avx2(int g, int nnz, const int32_t *cols, const float *vals, int lo, const double *a, double *acc, int rows, int lda) {
	const int full = g >> 2, rem = g & 3;
	const __m256i mask = flycl_mask4(rem);
	for (int t = 0; t < nnz; t++) {
		if ((int64_t)cols[t] - lo < 0 || (int64_t)cols[t] - lo >= rows) return 0;
		double *row = acc + (size_t)(cols[t] - lo) * lda;
		const __m256d w = _mm256_set1_pd((double)vals[t]);
		for (int q = 0; q < full; q++) {
			_mm256_storeu_pd(row + 4 * q, _mm256_add_pd(_mm256_loadu_pd(row + 4 * q), _mm256_mul_pd(_mm256_loadu_pd(a + 4 * q), w)));
		}
		if (rem) {
			__m256d r = _mm256_add_pd(_mm256_maskload_pd(row + 4 * full, mask), _mm256_mul_pd(_mm256_maskload_pd(a + 4 * full, mask), w));
			_mm256_maskstore_pd(row + 4 * full, mask, r);
		}
	}
	return 1;
}
#endif

static int flycl_sparse_kernel = -1;

static int flycl_sparse_select(void) {
	if (flycl_sparse_kernel < 0) {
		int k = 0;
#ifdef FLYCL_SPARSE_X86
		__builtin_cpu_init();
		if (__builtin_cpu_supports("avx2")) {
			k = 1;
		}
#endif
		flycl_sparse_kernel = k;
	}
	return flycl_sparse_kernel;
}

// The kernels return 1, or 0 for a column outside the rows given (their
// caller panics), or -1 where the CPU has no AVX2 (the Go loop runs).
static int flycl_sgather(int n, int m, int p, const int32_t *cols, const float *vals, const float *xt, int d, int ldx, float *h, int ldh) {
#ifdef FLYCL_SPARSE_X86
	if (flycl_sparse_select() == 1) {
		return sgather_avx2(n, m, p, cols, vals, xt, d, ldx, h, ldh);
	}
#endif
	return -1;
}

static int flycl_dgather(int nb, int nnz, const int32_t *cols, const float *vals, const float *buf, int rows, int ldb, double *s) {
#ifdef FLYCL_SPARSE_X86
	if (flycl_sparse_select() == 1) {
		return dgather_avx2(nb, nnz, cols, vals, buf, rows, ldb, s);
	}
#endif
	return -1;
}

static int flycl_dscatter(int g, int nnz, const int32_t *cols, const float *vals, int lo, const double *a, double *acc, int rows, int lda) {
#ifdef FLYCL_SPARSE_X86
	if (flycl_sparse_select() == 1) {
		return dscatter_avx2(g, nnz, cols, vals, lo, a, acc, rows, lda);
	}
#endif
	return -1;
}
*/
import "C"

import (
	"math"
	"unsafe"
)

func iptr(s []int32) *C.int32_t {
	if len(s) == 0 {
		return nil
	}
	return (*C.int32_t)(unsafe.Pointer(&s[0]))
}

func fits(v ...int) bool {
	for _, x := range v {
		if x > math.MaxInt32 {
			return false
		}
	}
	return true
}

// The vector kernels return 1 (done), 0 (a column outside the rows: no
// bound was checked before, so the work is not done twice) or -1 (no
// vector kernel on this CPU).

func sgatherRowsVec(n, m, p int, cols []int32, vals []float32, xt []float32, d, ldx int, h []float32, ldh int) int {
	if !fits(n, m, p, d, ldx, ldh) {
		return -1
	}
	return int(C.flycl_sgather(C.int(n), C.int(m), C.int(p), iptr(cols), fptr(vals), fptr(xt), C.int(d), C.int(ldx), fptr(h), C.int(ldh)))
}

func dgatherSparseVec(cols []int32, vals []float32, buf []float32, rows, ldb int, s []float64) int {
	if !fits(len(s), len(cols), rows, ldb) {
		return -1
	}
	return int(C.flycl_dgather(C.int(len(s)), C.int(len(cols)), iptr(cols), fptr(vals), fptr(buf), C.int(rows), C.int(ldb), dptr(s)))
}

func dscatterSparseVec(cols []int32, vals []float32, lo int, a []float64, acc []float64, rows, lda int) int {
	if !fits(len(a), len(cols), lo, rows, lda) {
		return -1
	}
	return int(C.flycl_dscatter(C.int(len(a)), C.int(len(cols)), iptr(cols), fptr(vals), C.int(lo), dptr(a), dptr(acc), C.int(rows), C.int(lda)))
}

// SparseKernel names the kernel of SgatherRows, DgatherSparse and
// DscatterSparse on this CPU: "avx2", or "go" (the Go loops).
func SparseKernel() string {
	if C.flycl_sparse_select() == 1 {
		return "avx2"
	}
	return "go"
}
