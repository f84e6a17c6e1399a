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
// T minimises the mean cross-entropy of softmax(scores/T) against
// targets smoothed as Platt (1999) smooths his: with N rows, the true
// class gets (N+1)/(N+2) and the others share 1/(N+2). With one-hot
// targets the fit runs to T → 0 when every row is answered right (a small
// pool often is), and every answer then shows p ≈ 1; with smoothed
// targets the fitted probabilities of such a pool stay near (N+1)/(N+2),
// the most a pool of N correct answers supports. The cross-entropy is
// convex in 1/T, so a golden-section search over log(1/T) in [1e-2, 1e5]
// finds its minimum (to a relative 1e-6 of 1/T). T is then raised to
// MinTemperature(scores, nc) if below.
func FitTemperature(scores []float32, nc int, cls []int) float64 {
	if nc < 2 || len(cls) == 0 {
		return 0
	}
	eps := 1 / float64(len(cls)+2)
	other := eps / float64(nc-1)
	ce := func(lb float64) float64 {
		b := math.Exp(lb)
		sum := 0.0
		for i, c := range cls {
			row := scores[i*nc : (i+1)*nc]
			top := float64(slices.Max(row))
			s, lin := 0.0, 0.0
			for j, v := range row {
				d := float64(v) - top
				s += math.Exp(b * d)
				w := other
				if j == c {
					w = 1 - eps
				}
				lin += w * b * d
			}
			sum += math.Log(s) - lin
		}
		return sum / float64(len(cls))
	}
	lb := minimize.Golden(ce, math.Log(1e-2), math.Log(1e5), 1e-6)
	return max(1/math.Exp(lb), MinTemperature(scores[:len(cls)*nc], nc))
}
