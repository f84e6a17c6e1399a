package reject

import (
	"math"
	"slices"
)

// ConformalRank returns the rank k (1-based, from the smallest) of the
// split-conformal threshold among n pooled scores for a requested keep
// share 1−α: k = ⌊α(n+1)⌋, at least 1 (when n+1 < 1/α the pool is too
// small for the request and the smallest score is taken) and at most n.
// A new score exchangeable with the n pooled ones is at least the k-th
// smallest of them with probability 1 − k/(n+1) (its rank among the
// n+1 is uniform; ties only raise it): at least 1−α when k = ⌊α(n+1)⌋.
// It is 0 for n < 1.
func ConformalRank(n int, keep float64) int {
	if n < 1 {
		return 0
	}
	// the product is rounded up by a relative 1e-9 so that a share such
	// as 0.9 (1−0.9 = 0.0999…98 in binary) gives ⌊0.1·10⌋ = 1, not 0
	k := int(math.Floor((1 - keep) * float64(n+1) * (1 + 1e-9)))
	return min(max(k, 1), n)
}

// GuaranteedKeep returns the share of new samples, exchangeable with n
// pooled calibration scores, that the threshold of KeepThreshold keeps
// in expectation: 1 − k/(n+1), k = ConformalRank(n, keep). It is at least
// keep when n+1 ≥ 1/(1−keep), else n/(n+1); and below keep + 1/(n+1)
// when the scores have no ties. 0 for n < 1 (no threshold).
func GuaranteedKeep(n int, keep float64) float64 {
	k := ConformalRank(n, keep)
	if k == 0 {
		return 0
	}
	return 1 - float64(k)/float64(n+1)
}

// KeepThreshold returns the split-conformal threshold (Vovk et al. 2005;
// Barber, Candès, Ramdas and Tibshirani 2021) that keeps (score >=
// threshold) at least the share keep of new samples exchangeable with
// vals, in expectation: the k-th smallest of vals, k = ConformalRank(n,
// keep) (see GuaranteedKeep for what it keeps). -Inf for no values.
func KeepThreshold(vals []float64, keep float64) float64 {
	if len(vals) == 0 {
		return math.Inf(-1)
	}
	s := slices.Clone(vals)
	slices.Sort(s)
	return s[ConformalRank(len(s), keep)-1]
}
