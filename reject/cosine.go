package reject

import (
	"math"

	"github.com/flycl/flycl/linalg"
)

// ClassCosine returns the largest cosine of x to the class sums (nc rows
// of len(x) in sums, norms their Euclidean norms): max over classes c of
// sums_c·x / (‖sums_c‖‖x‖). With own ≥ 0, x is one of class own's samples
// and is left out of its sum (the exact leave-one-out cosine: the cosine
// to sums_own − x). Classes of zero sum, and class own when x is its only
// sample (its sum less x is zero), are skipped; ok is false when every
// class is, or x is zero.
func ClassCosine(x, sums, norms []float64, own int) (cos float64, ok bool) {
	d := len(x)
	xn := 0.0
	for _, v := range x {
		xn += v * v
	}
	xn = math.Sqrt(xn)
	best := math.Inf(-1)
	for c := range norms {
		s := sums[c*d : (c+1)*d]
		var num, den float64
		if c == own {
			var ss float64
			for j, v := range s {
				r := v - x[j]
				num += r * x[j]
				ss += r * r
			}
			den = math.Sqrt(ss)
		} else {
			for j, v := range s {
				num += v * x[j]
			}
			den = norms[c]
		}
		if den > 0 && xn > 0 {
			best = max(best, num/(den*xn))
		}
	}
	if math.IsInf(best, -1) {
		return 0, false
	}
	return best, true
}

// LeaveOneOutCosines returns the exact leave-one-out cosines (ClassCosine
// with the sample left out of its class sum) of the rows sel of the
// codes h (rows of m), learned with class indices idx, to the class sums
// s (nc×m, the rows of S, which hold them): 0 for a sample with no class
// to compare with.
func LeaveOneOutCosines(s []float32, nc, m int, h []float32, sel, idx []int) []float64 {
	norms := make([]float64, nc)
	for c := range norms {
		var t float64
		for _, v := range s[c*m : (c+1)*m] {
			t += float64(v) * float64(v)
		}
		norms[c] = math.Sqrt(t)
	}
	// Per sample, ClassCosine's sums for the classes it is not of run over
	// the code's non-zeros only (a top-k code is mostly zeros), all classes
	// at once from S transposed (linalg.DgatherSparse): the terms skipped
	// are exact zeros, which leave a sum that starts at +0 unchanged, and
	// the products of two float32 values are exact in float64, so every
	// cosine has ClassCosine's bits at a fraction of its cost; the own
	// class's sum less the code is summed densely, as ClassCosine sums it.
	st := transposed(s, nc, m)
	out := make([]float64, len(sel))
	nz, hv := make([]int32, 0, m), make([]float32, 0, m)
	num := make([]float64, nc)
	for k, i := range sel {
		hi := h[i*m : (i+1)*m]
		nz, hv = nz[:0], hv[:0]
		xn := 0.0
		for j, v := range hi {
			if v != 0 {
				nz, hv = append(nz, int32(j)), append(hv, v)
				xn += float64(v) * float64(v)
			}
		}
		xn = math.Sqrt(xn)
		if nc > 0 {
			linalg.DgatherSparse(nz, hv, st, nc, num)
		}
		best := math.Inf(-1)
		own := idx[i]
		for c := range norms {
			n, den := num[c], norms[c]
			if c == own {
				var ss float64
				n = 0
				for j, v := range s[c*m : (c+1)*m] {
					x := float64(hi[j])
					r := float64(v) - x
					n += r * x
					ss += r * r
				}
				den = math.Sqrt(ss)
			}
			if den > 0 && xn > 0 {
				best = max(best, n/(den*xn))
			}
		}
		if !math.IsInf(best, -1) {
			out[k] = best
		}
	}
	return out
}

// transposed returns the rows×cols matrix a (row-major) transposed, by
// tiles of 64 columns (the tile of the result, 64 rows of it, stays in
// cache while every row of a writes its column into it).
func transposed(a []float32, rows, cols int) []float32 {
	t := make([]float32, rows*cols)
	const tile = 64
	for c0 := 0; c0 < cols; c0 += tile {
		c1 := min(cols, c0+tile)
		for r := range rows {
			for c, v := range a[r*cols+c0 : r*cols+c1] {
				t[(c0+c)*rows+r] = v
			}
		}
	}
	return t
}

// UnitRows returns the rows of s (nc × m) scaled to unit length, and
// which rows are not zero (a zero row stays zero): the class sums S as the
// cosine of the top+cosine score uses them (flycl.Predictor.ScoresCosines), in
// one place for every runtime that computes that score (the ONNX export).
func UnitRows(s []float32, nc, m int) ([]float32, []bool) {
	if len(s) < nc*m {
		return nil, nil
	}
	u, ok := make([]float32, nc*m), make([]bool, nc)
	for c := range nc {
		r := s[c*m : (c+1)*m]
		n := 0.0
		for _, v := range r {
			n += float64(v) * float64(v)
		}
		if !(n > 0) {
			continue
		}
		ok[c] = true
		f := 1 / math.Sqrt(n)
		for j, v := range r {
			u[c*m+j] = float32(float64(v) * f)
		}
	}
	return u, ok
}
