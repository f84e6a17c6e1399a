package reject

import (
	"fmt"
	"math"
)

// Score names a score, computed from a sample's class scores, that
// says how much the sample looks like one of the learned classes: the
// larger, the more "known". A rejection threshold applies to one of them.
type Score string

const (
	// ScoreTop is the largest class score (the ridge output of the
	// predicted class). Among the scores computed from the class scores
	// alone it separates known from unknown classes as well as or better
	// than the others on CIFAR-10 with MobileNetV2 and SqueezeNet
	// features (docs/UNKNOWN.md).
	ScoreTop Score = "top"
	// ScoreMargin is the largest class score minus the second largest
	// (the largest alone when the model has one class).
	ScoreMargin Score = "margin"
	// ScoreEnergy is T·log Σ_c exp(s_c/T), the negative free energy of
	// the scores at the rejection's temperature T (the fitted one).
	ScoreEnergy Score = "energy"
	// ScoreTopCosine is z(top) + z(cos): the top class score and the
	// cosine of the sample's code h to the nearest class sum of codes
	// (max over classes c of S_c·h / (‖S_c‖‖h‖), S_c the row of S), each
	// standardized by the mean and standard deviation of the calibration
	// pool's leave-one-out values (Rule.TopMean … CosStd). It needs
	// the sample's code, not only its class scores: see Rule.Value
	// and flycl.Predictor.ScoresCosines. The default: on CIFAR-10 with
	// MobileNetV2 and SqueezeNet features it separates known from unknown
	// classes better than the top score, and calibrated to keep 95% it
	// rejects more of the unknown (docs/UNKNOWN.md).
	ScoreTopCosine Score = "top+cosine"
)

// Scores lists the scores a rejection can apply to.
var Scores = []Score{ScoreTop, ScoreMargin, ScoreEnergy, ScoreTopCosine}

// NeedsCosine reports whether the score needs the cosine of the sample's
// code to the class sums besides its class scores.
func (k Score) NeedsCosine() bool { return k == ScoreTopCosine }

// ParseScore returns the score named s.
func ParseScore(s string) (Score, error) {
	for _, k := range Scores {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("reject: unknown open-set score %q (want top, margin, energy or top+cosine)", s)
}

// Value returns the score of one sample's class scores row. Energy needs
// a positive temperature; with temperature <= 0 it is the largest score
// (the limit T → 0). A score that needs more than the class scores
// (NeedsCosine) is NaN here: Rule.Value computes it.
func (k Score) Value(row []float32, temperature float64) float64 {
	if k.NeedsCosine() {
		return math.NaN()
	}
	if len(row) == 0 {
		return math.Inf(-1)
	}
	top, second := math.Inf(-1), math.Inf(-1)
	for _, v := range row {
		f := float64(v)
		if f > top {
			top, second = f, top
		} else if f > second {
			second = f
		}
	}
	switch k {
	case ScoreMargin:
		if len(row) == 1 {
			return top
		}
		return top - second
	case ScoreEnergy:
		if !(temperature > 0) {
			return top
		}
		s := 0.0
		for _, v := range row {
			s += math.Exp((float64(v) - top) / temperature)
		}
		return top + temperature*math.Log(s)
	default:
		return top
	}
}
