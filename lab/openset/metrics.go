package openset

import (
	"math"
	"slices"
	"sort"
)

// AUROC returns the area under the ROC curve of telling known (positive)
// from unknown (negative) samples by score, larger meaning known: the
// probability that a random known sample scores above a random unknown
// one, ties counting half (the Mann-Whitney U statistic over n₊n₋).
func AUROC(known, unknown []float64) float64 {
	if len(known) == 0 || len(unknown) == 0 {
		return math.NaN()
	}
	type v struct {
		s   float64
		pos bool
	}
	all := make([]v, 0, len(known)+len(unknown))
	for _, s := range known {
		all = append(all, v{s, true})
	}
	for _, s := range unknown {
		all = append(all, v{s, false})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].s < all[j].s })
	// sum of the ranks of the positives (average ranks over ties)
	rankSum := 0.0
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].s == all[i].s {
			j++
		}
		r := float64(i+j+1) / 2 // ranks i+1..j, average
		for t := i; t < j; t++ {
			if all[t].pos {
				rankSum += r
			}
		}
		i = j
	}
	np, nn := float64(len(known)), float64(len(unknown))
	return (rankSum - np*(np+1)/2) / (np * nn)
}

// keepThreshold returns the largest threshold t for which at least the
// share keep of vals has score >= t.
func keepThreshold(vals []float64, keep float64) float64 {
	s := slices.Clone(vals)
	slices.Sort(s)
	return s[min(max(mayDrop(len(s), keep), 0), len(s)-1)]
}

// mayDrop is how many of n values may fall below a threshold that keeps
// the share keep of them: ⌊(1−keep)·n⌋, with a margin for 1−keep's
// rounding (1 − 0.9 is 0.0999…98, and 10 of it is not 1).
func mayDrop(n int, keep float64) int {
	return int(math.Floor((1-keep)*float64(n) + 1e-9))
}

// share returns the fraction of vals for which f holds.
func share[T any](vals []T, f func(T) bool) float64 {
	if len(vals) == 0 {
		return math.NaN()
	}
	k := 0
	for _, v := range vals {
		if f(v) {
			k++
		}
	}
	return float64(k) / float64(len(vals))
}

// accuracyAbove returns the accuracy on the known samples whose score is
// at least t.
func accuracyAbove(vals []float64, correct []bool, t float64) float64 {
	n, k := 0, 0
	for i, v := range vals {
		if v >= t {
			n++
			if correct[i] {
				k++
			}
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return float64(k) / float64(n)
}

// ECE returns the expected calibration error of the confidences with
// bins equal-width bins over [0, 1]: Σ_b (n_b/n)·|accuracy_b − mean
// confidence_b|.
func ECE(conf []float64, correct []bool, bins int) float64 {
	cnt := make([]int, bins)
	acc := make([]float64, bins)
	cs := make([]float64, bins)
	for i, c := range conf {
		b := min(max(int(c*float64(bins)), 0), bins-1)
		cnt[b]++
		cs[b] += c
		if correct[i] {
			acc[b]++
		}
	}
	e := 0.0
	for b := range cnt {
		if cnt[b] > 0 {
			e += math.Abs(acc[b]-cs[b]) / float64(len(conf))
		}
	}
	return e
}

// Stat is a mean and standard deviation over runs.
type Stat struct {
	Mean, Std float64
	N         int
}

func stat(v []float64) Stat {
	var ok []float64
	for _, x := range v {
		if !math.IsNaN(x) {
			ok = append(ok, x)
		}
	}
	if len(ok) == 0 {
		return Stat{Mean: math.NaN(), Std: math.NaN()}
	}
	m := 0.0
	for _, x := range ok {
		m += x
	}
	m /= float64(len(ok))
	s := 0.0
	for _, x := range ok {
		s += (x - m) * (x - m)
	}
	if len(ok) > 1 {
		s = math.Sqrt(s / float64(len(ok)-1))
	} else {
		s = 0
	}
	return Stat{Mean: m, Std: s, N: len(ok)}
}
