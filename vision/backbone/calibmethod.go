package backbone

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// CalibMethod chooses each activation's quantization range from the
// values a calibration pass observes. The names follow ONNX Runtime's
// quantization tool (CalibrationMethod MinMax, Percentile), plus MSE:
//
//   - "minmax": the observed minimum and maximum (no clipping).
//   - "percentile:P" (P in (50, 100), "percentile" = 99.999, ONNX
//     Runtime's default): clip (100−P)/2 % of the values on each side, from
//     a histogram of every value (ONNX Runtime's asymmetric percentile).
//   - "mse": the range [lo, hi] (0 ≤ hi, lo ≤ 0) minimising the expected
//     squared quantization error of the observed values, clipping error plus
//     the rounding error step²/12 of every value inside the range (exact
//     zeros, e.g. after ReLU, are exact in every range and count 0).
//
// The method is not part of a graph's identity by name: the ranges it
// produces are (Calibration.Hash), so a different method gives a
// different model Hash and feature cache key.
type CalibMethod string

// The calibration methods.
const (
	CalibMinMax     CalibMethod = "minmax"
	CalibMSE        CalibMethod = "mse"
	CalibPercentile CalibMethod = "percentile"
)

// calibBins is the histogram resolution of the percentile and MSE
// methods: ONNX Runtime's default num_bins (2048), 8 bins per uint8 step.
const calibBins = 2048

// ParseCalibMethod checks a method name: minmax, mse, percentile or
// percentile:P ("" means minmax). It returns the canonical form
// ("percentile" becomes "percentile:99.999").
func ParseCalibMethod(s string) (CalibMethod, error) {
	switch s {
	case "", string(CalibMinMax):
		return CalibMinMax, nil
	case string(CalibMSE):
		return CalibMSE, nil
	case string(CalibPercentile):
		return "percentile:99.999", nil
	}
	if p, ok := strings.CutPrefix(s, "percentile:"); ok {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || !(v > 50 && v < 100) {
			return "", fmt.Errorf("calibration method %q: the percentile must be a number in (50, 100)", s)
		}
		return CalibMethod("percentile:" + strconv.FormatFloat(v, 'g', -1, 64)), nil
	}
	return "", fmt.Errorf("unknown calibration method %q (want minmax, mse, percentile or percentile:P)", s)
}

// percentile returns P of a "percentile:P" method, or 0.
func (m CalibMethod) percentile() float64 {
	if p, ok := strings.CutPrefix(string(m), "percentile:"); ok {
		v, _ := strconv.ParseFloat(p, 64)
		return v
	}
	return 0
}

// histogram counts one activation's values in calibBins equal bins over
// [lo, hi] (the observed range widened to include 0), and its exact zeros
// separately.
type histogram struct {
	lo, hi float64
	count  []float64
	zeros  float64
}

func newHistogram(r Range, bins int) *histogram {
	lo, hi := math.Min(0, float64(r.Min)), math.Max(0, float64(r.Max))
	return &histogram{lo: lo, hi: hi, count: make([]float64, bins)}
}

func (h *histogram) add(v []float32) {
	if h.hi <= h.lo {
		h.zeros += float64(len(v))
		return
	}
	B := len(h.count)
	inv := float64(B) / (h.hi - h.lo)
	lo := h.lo
	var zeros int
	for _, x := range v {
		if x == 0 {
			zeros++
			continue
		}
		k := int((float64(x) - lo) * inv)
		if k >= B {
			k = B - 1
		} else if k < 0 {
			k = 0
		}
		h.count[k]++
	}
	h.zeros += float64(zeros)
}

// width is the bin width; center(k) the middle of bin k.
func (h *histogram) width() float64       { return (h.hi - h.lo) / float64(len(h.count)) }
func (h *histogram) center(k int) float64 { return h.lo + (float64(k)+0.5)*h.width() }

// zeroBin is the bin that holds 0.
func (h *histogram) zeroBin() int {
	return min(len(h.count)-1, max(0, int(-h.lo/h.width())))
}

// percentileRange clips (100−p)/2 % of all values (zeros included) on each
// side: the left edge of the first bin whose cumulative count exceeds the
// lower cut, the right edge of the bin where it reaches the upper one.
func (h *histogram) percentileRange(p float64) Range {
	if h.hi <= h.lo {
		return Range{}
	}
	count := append([]float64(nil), h.count...)
	count[h.zeroBin()] += h.zeros
	var total float64
	for _, c := range count {
		total += c
	}
	cut := total * (100 - p) / 200
	B := len(count)
	lo, hi := 0, B-1
	var cum float64
	for k, c := range count {
		cum += c
		if cum > cut {
			lo = k
			break
		}
	}
	cum = 0
	for k := B - 1; k >= 0; k-- {
		cum += count[k]
		if cum > cut {
			hi = k
			break
		}
	}
	w := h.width()
	return Range{Min: float32(h.lo + float64(lo)*w), Max: float32(h.lo + float64(hi+1)*w)}
}

// mseRange searches the range [lo, hi] with lo a bin edge at or below 0
// and hi one at or above 0 minimising
//
//	Σ_{c<lo} n_c (c−lo)² + Σ_{c>hi} n_c (c−hi)² + N_in·s²/12, s = (hi−lo)/255,
//
// over the bin centres c (counts n_c, exact zeros excluded: they are
// exact whatever the range), N_in the non-zero values inside. Suffix and
// prefix sums make each candidate O(1).
func (h *histogram) mseRange() Range {
	if h.hi <= h.lo {
		return Range{}
	}
	B, w := len(h.count), h.width()
	// prefix sums over bins 0..k-1 (left clipping), suffix over k..B-1 (right)
	pn, p1, p2 := make([]float64, B+1), make([]float64, B+1), make([]float64, B+1)
	for k := 0; k < B; k++ {
		c, n := h.center(k), h.count[k]
		pn[k+1], p1[k+1], p2[k+1] = pn[k]+n, p1[k]+n*c, p2[k]+n*c*c
	}
	total := pn[B]
	z := h.zeroBin()
	// edges e_i = lo + i·w; lo candidates i in [0, z], hi candidates j in [z+1, B]
	// (edge z ≤ 0 < edge z+1 up to rounding; hi ≥ 0 and lo ≤ 0 by construction)
	leftErr := func(i int) (float64, float64) { // bins 0..i-1 are below edge i
		t := h.lo + float64(i)*w
		return p2[i] - 2*t*p1[i] + t*t*pn[i], pn[i]
	}
	rightErr := func(j int) (float64, float64) { // bins j..B-1 are above edge j
		t := h.lo + float64(j)*w
		n, s1, s2 := total-pn[j], p1[B]-p1[j], p2[B]-p2[j]
		return s2 - 2*t*s1 + t*t*n, n
	}
	bestErr, bi, bj := math.Inf(1), 0, B
	for i := 0; i <= z; i++ {
		el, nl := leftErr(i)
		for j := z + 1; j <= B; j++ {
			er, nr := rightErr(j)
			s := float64(j-i) * w / 255
			e := el + er + (total-nl-nr)*s*s/12
			if e < bestErr {
				bestErr, bi, bj = e, i, j
			}
		}
	}
	lo, hi := h.lo+float64(bi)*w, h.lo+float64(bj)*w
	return Range{Min: float32(math.Min(0, lo)), Max: float32(math.Max(0, hi))}
}
