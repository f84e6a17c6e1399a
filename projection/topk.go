package projection

import (
	"fmt"
	"math"
)

// TopKMode selects which k coordinates of each sample survive.
type TopKMode int

const (
	// Signed keeps the k largest signed values, as the reference code does.
	Signed TopKMode = iota
	// Magnitude keeps the k values of largest absolute value, as the
	// paper's text describes.
	Magnitude
)

func (t TopKMode) String() string {
	if t == Magnitude {
		return "magnitude"
	}
	return "signed"
}

// ParseTopKMode parses "signed" or "magnitude".
func ParseTopKMode(s string) (TopKMode, error) {
	switch s {
	case "signed", "":
		return Signed, nil
	case "magnitude", "abs":
		return Magnitude, nil
	}
	return Signed, fmt.Errorf("projection: unknown top-k mode %q (want signed or magnitude)", s)
}

// TopK zeroes all but k coordinates of each of the n rows of h (n×m,
// row-major), in place. Kept values are unchanged. When several values tie
// at the threshold, the ones with the lowest indices are kept, so exactly
// k survive. k >= m keeps everything.
func TopK(h []float32, n, m, k int, mode TopKMode) {
	if k >= m {
		return
	}
	if k <= 0 {
		clear(h[:n*m])
		return
	}
	parallelFor(n, func(lo, hi int) {
		scratch := make([]float32, m)
		for i := lo; i < hi; i++ {
			topKRow(h[i*m:(i+1)*m], k, mode, scratch)
		}
	})
}

func key(v float32, mode TopKMode) float32 {
	if mode == Magnitude {
		return float32(math.Abs(float64(v)))
	}
	return v
}

func topKRow(row []float32, k int, mode TopKMode, scratch []float32) {
	for i, v := range row {
		scratch[i] = key(v, mode)
	}
	// threshold = k-th largest key
	t := selectKth(scratch, len(row)-k)
	above := 0
	for _, v := range row {
		if key(v, mode) > t {
			above++
		}
	}
	ties := k - above // values equal to t that we may keep
	for i, v := range row {
		kv := key(v, mode)
		switch {
		case kv > t:
		case kv == t && ties > 0:
			ties--
		default:
			row[i] = 0
		}
	}
}

// selectKth returns the value that would be at index q of s sorted in
// ascending order, reordering s (Hoare's quickselect, median of three).
func selectKth(s []float32, q int) float32 {
	lo, hi := 0, len(s)-1
	for hi > lo {
		mid := lo + (hi-lo)/2
		// median of three into s[mid]
		if s[mid] < s[lo] {
			s[mid], s[lo] = s[lo], s[mid]
		}
		if s[hi] < s[lo] {
			s[hi], s[lo] = s[lo], s[hi]
		}
		if s[hi] < s[mid] {
			s[hi], s[mid] = s[mid], s[hi]
		}
		p := s[mid]
		i, j := lo, hi
		for i <= j {
			for s[i] < p {
				i++
			}
			for s[j] > p {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i++
				j--
			}
		}
		switch {
		case q <= j:
			hi = j
		case q >= i:
			lo = i
		default:
			return s[q]
		}
	}
	return s[q]
}
