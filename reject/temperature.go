package reject

import (
	"math"
	"slices"

	"github.com/flycl/flycl/internal/minimize"
)

// Probability bounds of FitTemperature: an answer whose top two scores
// are within CloseScores of the larger's magnitude, and whose top score
// is at most twice the largest magnitude of a top score fitted on, gets a
// probability below MaxCloseProbability.
const (
	CloseScores         = 0.10
	MaxCloseProbability = 0.99
)

// MinTemperature returns the lower bound FitTemperature puts on T for
// calibration rows scores (of nc): 2·max|top| · CloseScores /
// logit(MaxCloseProbability), so that two scores s1 ≥ s2 with s1 − s2 ≤
// CloseScores·|s1| and |s1| ≤ 2·max|top| have softmax(s/T) of s1 at
// most σ((s1−s2)/T) ≤ MaxCloseProbability.
func MinTemperature(scores []float32, nc int) float64 {
	big := 0.0
	for i := 0; i+nc <= len(scores); i += nc {
		big = max(big, math.Abs(float64(slices.Max(scores[i:i+nc]))))
	}
	return 2 * big * CloseScores / math.Log(MaxCloseProbability/(1-MaxCloseProbability))
}

// FitTemperature returns the temperature T of the probabilities
// softmax(scores/T) fitted to the leave-one-out rows scores (rows of nc)
// of samples of the true classes cls, or 0 when it is not determined (one
// class, no rows).
//
// T maximises the likelihood of the rows' true classes (the mean
// cross-entropy of softmax(scores/T) against one-hot targets is least:
// the temperature scaling of Guo, Pleiss, Sun and Weinberger 2017). That
// cross-entropy is convex in 1/T, so a golden-section search over
// log(1/T) in [1e-2, 1e5] finds its minimum (to a relative 1e-6 of 1/T).
// When no row is answered wrong (its true class's score at least as high
// as every other: a small pool of distinct classes often is) the
// likelihood has no maximum, it grows as T → 0, and every answer would
// show p ≈ 1; T is then the one at which the rows' mean top-class
// probability is Laplace's estimate (R+1)/(N+2) of the accuracy of N
// answers of which R are right (the others tied with another class: a tie
// is not counted right, so ties raise T; where so many tie that the
// estimate is at chance or below, T stays at the interval's end, 100;
// the mean rises with 1/T: a bisection over the same interval; with two
// classes, one margin g and no tie, T = g/ln(N+1)). T is then
// raised to MinTemperature(scores, nc) if below. Scores that are not
// finite leave T undetermined (0).
func FitTemperature(scores []float32, nc int, cls []int) float64 {
	if nc < 2 || len(cls) == 0 {
		return 0
	}
	lo, hi := math.Log(1e-2), math.Log(1e5)
	var lb float64
	for _, v := range scores[:len(cls)*nc] {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return 0
		}
	}
	if right, ok := noneWrong(scores, nc, cls); ok {
		target := float64(right+1) / float64(len(cls)+2)
		for hi-lo > 1e-6 {
			mid := (lo + hi) / 2
			if meanTopProbability(scores, nc, len(cls), math.Exp(mid)) < target {
				lo = mid
			} else {
				hi = mid
			}
		}
		lb = (lo + hi) / 2
	} else {
		lb = plainLogInverse(scores, nc, cls)
	}
	return max(1/math.Exp(lb), MinTemperature(scores[:len(cls)*nc], nc))
}

// PlainTemperature is the temperature of the plain likelihood fit of the
// rows, without FitTemperature's rule for rows none of which is wrong or
// its lower bound: the minimum of the mean cross-entropy over log(1/T) in
// [1e-2, 1e5], which for rows all right runs to where their likelihood
// stops changing in float64. Benchmarks compare it with FitTemperature.
func PlainTemperature(scores []float32, nc int, cls []int) float64 {
	return 1 / math.Exp(plainLogInverse(scores, nc, cls))
}

// plainLogInverse is log(1/T) of the plain likelihood fit: a
// golden-section search of the cross-entropy's minimum over [1e-2, 1e5].
func plainLogInverse(scores []float32, nc int, cls []int) float64 {
	return minimize.Golden(func(lb float64) float64 { return crossEntropy(scores, nc, cls, math.Exp(lb)) }, math.Log(1e-2), math.Log(1e5), 1e-6)
}

// crossEntropy is the mean cross-entropy of softmax(b·row) against the
// true classes cls of the rows of scores.
func crossEntropy(scores []float32, nc int, cls []int, b float64) float64 {
	sum := 0.0
	for i, c := range cls {
		row := scores[i*nc : (i+1)*nc]
		top := float64(slices.Max(row))
		s := 0.0
		for _, v := range row {
			s += math.Exp(b * (float64(v) - top))
		}
		sum += math.Log(s) - b*(float64(row[c])-top)
	}
	return sum / float64(len(cls))
}

// meanTopProbability is the mean over the first n rows of scores of the
// largest probability of softmax(b·row).
func meanTopProbability(scores []float32, nc, n int, b float64) float64 {
	sum := 0.0
	for i := range n {
		row := scores[i*nc : (i+1)*nc]
		top := float64(slices.Max(row))
		s := 0.0
		for _, v := range row {
			s += math.Exp(b * (float64(v) - top))
		}
		sum += 1 / s
	}
	return sum / float64(n)
}

// noneWrong reports whether no row's true class (cls) has a score below
// another of the row's, and how many rows have it above all the others
// (answered right, where the rest tie).
func noneWrong(scores []float32, nc int, cls []int) (right int, ok bool) {
	for i, c := range cls {
		row := scores[i*nc : (i+1)*nc]
		strict := true
		for j, v := range row {
			if j == c {
				continue
			}
			if row[c] < v {
				return 0, false
			}
			strict = strict && row[c] > v
		}
		if strict {
			right++
		}
	}
	return right, true
}
