//go:build cgo && !noopenblas

package linalg

/*
#include <stddef.h>

// Every element c[i][j] is the dot product of row i of a and row j of b,
// computed by one fixed sequence of operations: 8 lanes of products
// accumulated along k (lane l holds the terms k ≡ l mod 8), the lanes
// summed in a fixed tree, then the k mod 8 remaining terms in order. The
// blocking below only interleaves independent elements; no element's
// arithmetic depends on its neighbours, the block it falls in, or n and m.
// The AVX2 kernel spells out its fused multiply-adds with intrinsics; its
// only other arithmetic is the lane sums, which nothing can fuse.

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define FLYCL_X86 1

__attribute__((target("avx2,fma")))
static inline float hsum8(__m256 v, const float *a, const float *b, int k8, int k) {
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)); // l, l+4
	s = _mm_add_ps(s, _mm_movehl_ps(s, s));                                       // (0,4)+(2,6), (1,5)+(3,7)
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	for (int kk = k8; kk < k; kk++) {
		s = _mm_fmadd_ss(_mm_set_ss(a[kk]), _mm_set_ss(b[kk]), s);
	}
	return _mm_cvtss_f32(s);
}

// Prefetch the same 64 bytes of the 4 rows of the block after the next
// one (rows j..j+3 when j+3 < m; b3 is the current block's last row): the
// first sample's pass over a block brings in the block after next while
// it computes. Prefetches change no arithmetic.
#define FLYCL_PREFETCH_NEXT(b3, ldb, kk, j, m) do { \
	if ((j) + 3 < (m)) { \
		const float *p_ = (b3) + (size_t)5 * (ldb) + (kk); \
		_mm_prefetch((const char *)p_, _MM_HINT_T0); \
		_mm_prefetch((const char *)(p_ + (ldb)), _MM_HINT_T0); \
		_mm_prefetch((const char *)(p_ + 2 * (size_t)(ldb)), _MM_HINT_T0); \
		_mm_prefetch((const char *)(p_ + 3 * (size_t)(ldb)), _MM_HINT_T0); \
	} \
} while (0)

__attribute__((target("avx2,fma")))
static void dotrows_avx2(int n, int m, int k, const float *a, int lda, const float *b, int ldb, float *c, int ldc) {
	const int k8 = k & ~7;
	int j = 0;
	for (; j + 4 <= m; j += 4) {
		const float *b0 = b + (size_t)j * ldb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
		int i = 0;
		for (; i + 2 <= n; i += 2) {
			const float *a0 = a + (size_t)i * lda, *a1 = a0 + lda;
			__m256 s00 = _mm256_setzero_ps(), s01 = s00, s02 = s00, s03 = s00;
			__m256 s10 = s00, s11 = s00, s12 = s00, s13 = s00;
			for (int kk = 0; kk < k8; kk += 8) {
				if (i == 0 && (kk & 15) == 0) {
					FLYCL_PREFETCH_NEXT(b3, ldb, kk, j + 8, m);
				}
				__m256 x0 = _mm256_loadu_ps(a0 + kk), x1 = _mm256_loadu_ps(a1 + kk);
				__m256 w = _mm256_loadu_ps(b0 + kk);
				s00 = _mm256_fmadd_ps(x0, w, s00);
				s10 = _mm256_fmadd_ps(x1, w, s10);
				w = _mm256_loadu_ps(b1 + kk);
				s01 = _mm256_fmadd_ps(x0, w, s01);
				s11 = _mm256_fmadd_ps(x1, w, s11);
				w = _mm256_loadu_ps(b2 + kk);
				s02 = _mm256_fmadd_ps(x0, w, s02);
				s12 = _mm256_fmadd_ps(x1, w, s12);
				w = _mm256_loadu_ps(b3 + kk);
				s03 = _mm256_fmadd_ps(x0, w, s03);
				s13 = _mm256_fmadd_ps(x1, w, s13);
			}
			float *c0 = c + (size_t)i * ldc + j, *c1 = c0 + ldc;
			c0[0] = hsum8(s00, a0, b0, k8, k);
			c0[1] = hsum8(s01, a0, b1, k8, k);
			c0[2] = hsum8(s02, a0, b2, k8, k);
			c0[3] = hsum8(s03, a0, b3, k8, k);
			c1[0] = hsum8(s10, a1, b0, k8, k);
			c1[1] = hsum8(s11, a1, b1, k8, k);
			c1[2] = hsum8(s12, a1, b2, k8, k);
			c1[3] = hsum8(s13, a1, b3, k8, k);
		}
		for (; i < n; i++) {
			const float *a0 = a + (size_t)i * lda;
			__m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
			for (int kk = 0; kk < k8; kk += 8) {
				if (i == 0 && (kk & 15) == 0) {
					FLYCL_PREFETCH_NEXT(b3, ldb, kk, j + 8, m);
				}
				__m256 x0 = _mm256_loadu_ps(a0 + kk);
				s0 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(b0 + kk), s0);
				s1 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(b1 + kk), s1);
				s2 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(b2 + kk), s2);
				s3 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(b3 + kk), s3);
			}
			float *c0 = c + (size_t)i * ldc + j;
			c0[0] = hsum8(s0, a0, b0, k8, k);
			c0[1] = hsum8(s1, a0, b1, k8, k);
			c0[2] = hsum8(s2, a0, b2, k8, k);
			c0[3] = hsum8(s3, a0, b3, k8, k);
		}
	}
	for (; j < m; j++) {
		const float *b0 = b + (size_t)j * ldb;
		for (int i = 0; i < n; i++) {
			const float *a0 = a + (size_t)i * lda;
			__m256 s0 = _mm256_setzero_ps();
			for (int kk = 0; kk < k8; kk += 8) {
				s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a0 + kk), _mm256_loadu_ps(b0 + kk), s0);
			}
			c[(size_t)i * ldc + j] = hsum8(s0, a0, b0, k8, k);
		}
	}
}
#endif

// The portable kernel: the same order of operations in scalar code (its
// bits may differ from the AVX2 kernel's, which fuses the multiply-adds; a
// process uses one kernel throughout, and every element takes the same
// code path through it).
static void dotrows_generic(int n, int m, int k, const float *a, int lda, const float *b, int ldb, float *c, int ldc) {
	const int k8 = k & ~7;
	for (int j = 0; j < m; j++) {
		const float *b0 = b + (size_t)j * ldb;
		for (int i = 0; i < n; i++) {
			const float *a0 = a + (size_t)i * lda;
			float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
			for (int kk = 0; kk < k8; kk += 8) {
				for (int l = 0; l < 8; l++) {
					s[l] += a0[kk + l] * b0[kk + l];
				}
			}
			float t = ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
			for (int kk = k8; kk < k; kk++) {
				t += a0[kk] * b0[kk];
			}
			c[(size_t)i * ldc + j] = t;
		}
	}
}

static int flycl_dotrows_kernel = -1;

static int flycl_dotrows_select(void) {
	if (flycl_dotrows_kernel < 0) {
		int k = 0;
#ifdef FLYCL_X86
		__builtin_cpu_init();
		if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
			k = 1;
		}
#endif
		flycl_dotrows_kernel = k;
	}
	return flycl_dotrows_kernel;
}

static void flycl_dotrows(int n, int m, int k, const float *a, int lda, const float *b, int ldb, float *c, int ldc) {
#ifdef FLYCL_X86
	if (flycl_dotrows_select() == 1) {
		dotrows_avx2(n, m, k, a, lda, b, ldb, c, ldc);
		return;
	}
#endif
	dotrows_generic(n, m, k, a, lda, b, ldb, c, ldc);
}

static const char *flycl_dotrows_name(void) {
	return flycl_dotrows_select() == 1 ? "avx2-fma" : "generic";
}
*/
import "C"

import (
	"fmt"
	"math"
)

// SdotRows sets c[i*ldc+j] to the dot product of row i of a (n×k, leading
// dimension lda) and row j of b (m×k, leading dimension ldb): c = a bᵀ,
// as Sgemm(false, true, n, m, k, 1, a, lda, b, ldb, 0, c, ldc) computes
// it, but every element by one fixed sequence of operations, so that its
// bits depend on its two rows alone, never on n, m, its position in c, its
// neighbours or the number of threads (a BLAS gemm rounds an element
// differently depending on where it falls in the kernel's blocks). It runs
// on the calling goroutine only: callers split the rows to use more cores.
// The kernel is chosen once per process by the CPU (AVX2 with FMA, or
// portable scalar code); DotRowsKernel names it.
func SdotRows(n, m, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	checkGemm("SdotRows", false, true, n, m, k, len(a), lda, len(b), ldb, len(c), ldc)
	if max(n, m, k, lda, ldb, ldc) > math.MaxInt32 {
		panic(fmt.Sprintf("linalg.SdotRows: dimensions beyond int32 (n=%d m=%d k=%d lda=%d ldb=%d ldc=%d)", n, m, k, lda, ldb, ldc))
	}
	if n == 0 || m == 0 {
		return
	}
	if k == 0 {
		for i := 0; i < n; i++ {
			clear(c[i*ldc : i*ldc+m])
		}
		return
	}
	C.flycl_dotrows(C.int(n), C.int(m), C.int(k), fptr(a), C.int(lda), fptr(b), C.int(ldb), fptr(c), C.int(ldc))
}

// DotRowsKernel names the kernel SdotRows uses on this CPU.
func DotRowsKernel() string { return C.GoString(C.flycl_dotrows_name()) }
