package projection

import (
	"fmt"
	"math"

	"github.com/flycl/flycl/internal/parallel"
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

// MarshalText writes the mode's name ("signed" or "magnitude"); a value
// that is neither is an error.
func (t TopKMode) MarshalText() ([]byte, error) {
	if t != Signed && t != Magnitude {
		return nil, fmt.Errorf("projection: invalid top-k mode %d", int(t))
	}
	return []byte(t.String()), nil
}

// UnmarshalText parses a mode's name (ParseTopKMode).
func (t *TopKMode) UnmarshalText(b []byte) error {
	v, err := ParseTopKMode(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
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
	parallel.For(n, func(lo, hi int) {
		scratch := make([]uint32, m+1)
		for i := lo; i < hi; i++ {
			topKRow(h[i*m:(i+1)*m], k, mode, scratch)
		}
	})
}

// orderedKey maps a value to a uint32 whose unsigned order is the order
// of the selection key (the signed value, or its magnitude).
func orderedKey(v float32, mode TopKMode) uint32 {
	b := math.Float32bits(v)
	if mode == Magnitude {
		return b & 0x7fffffff
	}
	// branch-free: flip all bits of negatives, only the sign of the rest
	return b ^ (uint32(int32(b)>>31) | 0x80000000)
}

func key(v float32, mode TopKMode) float32 {
	if mode == Magnitude {
		return float32(math.Abs(float64(v)))
	}
	return v
}

// topKRow keeps the k largest keys of row. It finds the k-th largest key
// by a radix select: a histogram of the top 11 bits of every key locates
// the bucket that holds it, then only that bucket's keys are searched.
func topKRow(row []float32, k int, mode TopKMode, scratch []uint32) {
	var hist [2048]int32
	for _, v := range row {
		hist[orderedKey(v, mode)>>21]++
	}
	above := 0 // keys in buckets above the threshold's bucket
	b := 2047
	for ; b > 0; b-- {
		if above+int(hist[b]) >= k {
			break
		}
		above += int(hist[b])
	}
	// Gather the bucket's keys; written unconditionally, kept by count, so
	// the loop has no unpredictable branch.
	nc := 0
	for _, v := range row {
		u := orderedKey(v, mode)
		scratch[nc] = u
		inc := 0
		if int(u>>21) == b {
			inc = 1
		}
		nc += inc
	}
	cand := scratch[:nc]
	// the (k-above)-th largest candidate
	t := selectKthUint(cand, len(cand)-(k-above))
	gt, eq := above, 0
	for _, u := range cand {
		if u > t {
			gt++
		} else if u == t {
			eq++
		}
	}
	if gt+eq == k {
		// No surplus ties: keep exactly the keys >= t, without branches.
		for i, v := range row {
			drop := uint32((int64(orderedKey(v, mode)) - int64(t)) >> 63) // all ones if key < t
			row[i] = math.Float32frombits(math.Float32bits(v) &^ drop)
		}
		return
	}
	ties := k - gt // keys equal to t that survive: the first ones
	for i, v := range row {
		u := orderedKey(v, mode)
		switch {
		case u > t:
		case u == t && ties > 0:
			ties--
		default:
			row[i] = 0
		}
	}
}

// selectKthUint returns the value at index q of s sorted ascending,
// reordering s (Hoare's quickselect, median of three).
func selectKthUint(s []uint32, q int) uint32 {
	lo, hi := 0, len(s)-1
	for hi > lo {
		mid := lo + (hi-lo)/2
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
