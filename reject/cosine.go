package reject

import (
	"math"
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
	sums, norms := make([]float64, nc*m), make([]float64, nc)
	for i, v := range s[:nc*m] {
		sums[i] = float64(v)
		norms[i/m] += float64(v) * float64(v)
	}
	for c := range norms {
		norms[c] = math.Sqrt(norms[c])
	}
	// Per sample, ClassCosine's sums for the classes it is not of run over
	// the code's non-zeros only (a top-k code is mostly zeros): the terms
	// skipped are exact zeros, which leave a sum that starts at +0
	// unchanged, so every cosine has ClassCosine's bits at a fraction of
	// its cost; the own class's sum less the code is summed densely, as
	// ClassCosine sums it.
	out := make([]float64, len(sel))
	x := make([]float64, m)
	nz := make([]int32, 0, m)
	for k, i := range sel {
		nz = nz[:0]
		xn := 0.0
		for j, v := range h[i*m : (i+1)*m] {
			f := float64(v)
			x[j] = f
			if v != 0 {
				nz = append(nz, int32(j))
				xn += f * f
			}
		}
		xn = math.Sqrt(xn)
		best := math.Inf(-1)
		own := idx[i]
		for c := range norms {
			sc := sums[c*m : (c+1)*m]
			var num, den float64
			if c == own {
				var ss float64
				for j, v := range sc {
					r := v - x[j]
					num += r * x[j]
					ss += r * r
				}
				den = math.Sqrt(ss)
			} else {
				for _, j := range nz {
					num += sc[j] * x[j]
				}
				den = norms[c]
			}
			if den > 0 && xn > 0 {
				best = max(best, num/(den*xn))
			}
		}
		if !math.IsInf(best, -1) {
			out[k] = best
		}
	}
	return out
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
