package linalg

import "fmt"

// The sparse kernels below are the inner loops of the sparse random
// projection and of the dual ridge form: sums over the non-zeros of
// sparse rows, in the rows' order, with the samples (or classes) of a
// block side by side. Every sum runs term after term in the order of the
// non-zeros, each product rounded before it is added (never fused), so the
// vector kernel (AVX2, where the CPU has it and cgo is on) and the Go
// loops give the same bits; SparseKernel names the one in use.

// SgatherRows sets h[r*ldh+j] = Σ_{i<p} vals[j*p+i]·xt[cols[j*p+i]*ldx+r]
// for j < m and r < n: the rows of a matrix with p non-zeros per row
// (columns cols, values vals, row by row) times the n columns of the
// transposed block xt (row c holds feature c of the n samples, stride
// ldx), in float32, summed from 0 in the order of the non-zeros. Every
// element's bits depend on its row and its sample alone.
func SgatherRows(n, m, p int, cols []int32, vals []float32, xt []float32, ldx int, h []float32, ldh int) {
	if n < 0 || m < 0 || p < 0 || len(cols) < m*p || len(vals) < m*p || n > ldx || m > ldh {
		panic(fmt.Sprintf("linalg.SgatherRows: n=%d m=%d p=%d with %d columns, %d values, ldx=%d, ldh=%d", n, m, p, len(cols), len(vals), ldx, ldh))
	}
	if n == 0 || m == 0 {
		return
	}
	if len(h) < (n-1)*ldh+m {
		panic(fmt.Sprintf("linalg.SgatherRows: h has %d values, want (n-1)·ldh+m = %d", len(h), (n-1)*ldh+m))
	}
	if len(xt) < n {
		panic(fmt.Sprintf("linalg.SgatherRows: xt has %d values for %d samples", len(xt), n))
	}
	switch sgatherRowsVec(n, m, p, cols, vals, xt, (len(xt)-n)/ldx+1, ldx, h, ldh) {
	case 0:
		panic(fmt.Sprintf("linalg.SgatherRows: a column past the %d values of xt (ldx=%d)", len(xt), ldx))
	case -1:
		sgatherRowsGo(n, m, p, cols, vals, xt, ldx, h, ldh)
	}
}

func sgatherRowsGo(n, m, p int, cols []int32, vals []float32, xt []float32, ldx int, h []float32, ldh int) {
	a := make([]float32, n)
	for j := range m {
		clear(a)
		cs, vs := cols[j*p:(j+1)*p], vals[j*p:(j+1)*p]
		for i, c := range cs {
			v, src := vs[i], xt[int(c)*ldx:][:n]
			for r := range a {
				a[r] += float32(v * src[r])
			}
		}
		for r, v := range a {
			h[r*ldh+j] = v
		}
	}
}

// DgatherSparse sets s[r] = Σ_t float64(vals[t])·float64(buf[cols[t]*ldb+r])
// for r < len(s): one sparse row (columns cols, values vals) times the
// len(s) columns of buf (row c of buf holds column c's values, stride
// ldb), summed in float64 from 0 in the order of the non-zeros. The
// products of two float32 values are exact in float64, so each sum has the
// bits of the float64 sum of the exact products in that order.
func DgatherSparse(cols []int32, vals []float32, buf []float32, ldb int, s []float64) {
	nb := len(s)
	if len(vals) != len(cols) || nb > ldb {
		panic(fmt.Sprintf("linalg.DgatherSparse: %d columns, %d values, %d sums, ldb=%d", len(cols), len(vals), nb, ldb))
	}
	if nb == 0 {
		return
	}
	if len(buf) < nb {
		panic(fmt.Sprintf("linalg.DgatherSparse: buf has %d values for %d sums", len(buf), nb))
	}
	switch dgatherSparseVec(cols, vals, buf, (len(buf)-nb)/ldb+1, ldb, s) {
	case 0:
		panic(fmt.Sprintf("linalg.DgatherSparse: a column past the %d values of buf (ldb=%d)", len(buf), ldb))
	case -1:
		dgatherSparseGo(cols, vals, buf, ldb, s)
	}
}

func dgatherSparseGo(cols []int32, vals []float32, buf []float32, ldb int, s []float64) {
	clear(s)
	for t, c := range cols {
		v, src := float64(vals[t]), buf[int(c)*ldb:][:len(s)]
		for r := range s {
			s[r] += float64(float64(src[r]) * v)
		}
	}
}

// DscatterSparse adds, for every non-zero t of a sparse row (columns cols,
// values vals), a·vals[t] to row cols[t]−lo of acc (rows of len(a), stride
// lda): acc[(cols[t]−lo)*lda+c] += a[c]·float64(vals[t]), the non-zeros in
// order, each product rounded before it is added.
func DscatterSparse(cols []int32, vals []float32, lo int, a []float64, acc []float64, lda int) {
	g := len(a)
	if len(vals) != len(cols) || g > lda {
		panic(fmt.Sprintf("linalg.DscatterSparse: %d columns, %d values, %d coefficients, lda=%d", len(cols), len(vals), g, lda))
	}
	if g == 0 {
		return
	}
	if len(acc) < g || lo < 0 {
		panic(fmt.Sprintf("linalg.DscatterSparse: acc has %d values for %d coefficients, lo=%d", len(acc), g, lo))
	}
	switch dscatterSparseVec(cols, vals, lo, a, acc, (len(acc)-g)/lda+1, lda) {
	case 0:
		panic(fmt.Sprintf("linalg.DscatterSparse: a column outside the %d values of acc from %d (lda=%d)", len(acc), lo, lda))
	case -1:
		dscatterSparseGo(cols, vals, lo, a, acc, lda)
	}
}

func dscatterSparseGo(cols []int32, vals []float32, lo int, a []float64, acc []float64, lda int) {
	for t, c := range cols {
		v, row := float64(vals[t]), acc[(int(c)-lo)*lda:][:len(a)]
		for k, x := range a {
			row[k] += float64(x * v)
		}
	}
}
