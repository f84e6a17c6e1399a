package reject

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Rule says when a prediction is "unknown" and how class scores map
// to calibrated probabilities. The zero value rejects nothing and
// calibrates nothing (models saved before rejection existed load with it).
type Rule struct {
	// Score is what Threshold applies to ("" : rejection off).
	Score Score `json:"score,omitempty"`
	// Threshold: a sample whose score is below it is unknown.
	Threshold float64 `json:"threshold"`
	// Keep is the share of known samples the threshold was calibrated to
	// keep, 1−α (0 when the threshold was set by hand; also set while
	// rejection is off for want of any calibration sample). What the
	// threshold guarantees for a pool of Samples scores is Guaranteed.
	Keep float64 `json:"keep,omitempty"`
	// Temperature T of the calibrated probabilities softmax(scores/T)
	// (0: not calibrated; Probability then reports nothing).
	Temperature float64 `json:"temperature,omitempty"`
	// Samples is the number of leave-one-out scores in the pool the
	// threshold was taken from (0 when set by hand).
	Samples int `json:"samples,omitempty"`
	// TopMean, TopStd, CosMean and CosStd standardize the top score and
	// the cosine for ScoreTopCosine: the mean and standard deviation of
	// the pool's leave-one-out values (zero for the other scores).
	TopMean float64 `json:"top_mean,omitempty"`
	TopStd  float64 `json:"top_std,omitempty"`
	CosMean float64 `json:"cos_mean,omitempty"`
	CosStd  float64 `json:"cos_std,omitempty"`
}

// Enabled reports whether the rejection rejects anything.
func (r Rule) Enabled() bool { return r.Score != "" }

// Value returns the open-set score of a sample from its class scores row
// and the cosine of its code to the nearest class sum (see
// ScoreTopCosine; flycl.Predictor.ScoresCosines computes both). The cosine is
// read only by a score that needs it (Score.NeedsCosine); there, a NaN
// cosine (not computed) gives NaN.
func (r Rule) Value(row []float32, cos float64) float64 {
	if r.Score.NeedsCosine() {
		return (ScoreTop.Value(row, 0)-r.TopMean)/r.TopStd + (cos-r.CosMean)/r.CosStd
	}
	return r.Score.Value(row, r.Temperature)
}

// Reject reports whether a sample with class scores row and cosine cos
// (as for Value) is unknown: its score is below the threshold, or not a
// number (a NaN cosine for a score that needs it rejects).
func (r Rule) Reject(row []float32, cos float64) bool {
	return r.Enabled() && !(r.Value(row, cos) >= r.Threshold)
}

// Margin returns Value less the threshold: negative (how far below it)
// for a sample Reject answers "unknown". ok is false when rejection is off
// or the value is not a number.
func (r Rule) Margin(row []float32, cos float64) (margin float64, ok bool) {
	v := r.Value(row, cos)
	if !r.Enabled() || math.IsNaN(v) {
		return 0, false
	}
	return v - r.Threshold, true
}

// Probability returns the calibrated probability of the top class of
// row, softmax(row/T) at its largest entry; ok is false when no
// temperature has been fitted.
func (r Rule) Probability(row []float32) (p float64, ok bool) {
	if !(r.Temperature > 0) || len(row) == 0 {
		return 0, false
	}
	top := float64(slices.Max(row))
	s := 0.0
	for _, v := range row {
		s += math.Exp((float64(v) - top) / r.Temperature)
	}
	return 1 / s, true
}

// Guaranteed returns the share of new samples of the learned classes
// that the threshold keeps in expectation, when they are exchangeable
// with the pooled calibration samples (GuaranteedKeep of Samples and
// Keep): at least Keep, or Samples/(Samples+1) when the pool is too small
// for Keep. 0 when rejection is off or the threshold was set by hand (no
// guarantee).
func (r Rule) Guaranteed() float64 {
	if !r.Enabled() || !(r.Keep > 0) {
		return 0
	}
	return GuaranteedKeep(r.Samples, r.Keep)
}

// String describes the rejection in one line: the score, the threshold,
// the pool, the share it keeps, and the temperature.
func (r Rule) String() string {
	var s string
	switch {
	case !r.Enabled() && r.Keep > 0:
		s = "unknown off: no calibration sample yet (a class's only sample cannot be left out: learn a second sample of a class)"
	case !r.Enabled():
		s = "unknown off"
	case !(r.Keep > 0):
		s = fmt.Sprintf("unknown below %s score %.4g (set by hand: no guarantee)", r.Score, r.Threshold)
	default:
		g := r.Guaranteed()
		s = fmt.Sprintf("unknown below %s score %.4g: keeps %s of new samples of the learned classes in expectation (split-conformal, %d leave-one-out samples", r.Score, r.Threshold, pctString(g), r.Samples)
		switch {
		case r.Keep >= 1:
			s += "; 100% asked: no threshold promises it, the smallest score is the threshold)"
		case g < r.Keep-1e-12:
			need := int(math.Ceil(1/(1-r.Keep)*(1-1e-9))) - 1
			s += fmt.Sprintf("; %s asked needs %d: the smallest score is the threshold)", pctString(r.Keep), need)
		default:
			s += fmt.Sprintf("; asked %s)", pctString(r.Keep))
		}
	}
	if r.Temperature > 0 {
		s += fmt.Sprintf("; probabilities at temperature %.3g", r.Temperature)
	} else {
		s += "; no probabilities"
	}
	return s
}

// pctString formats a share as a percentage with up to one decimal.
func pctString(v float64) string {
	return strconv.FormatFloat(math.Round(1000*v)/10, 'f', -1, 64) + "%"
}

// Validate checks that a rejection means something (a known score, finite
// numbers, a share in (0, 1]).
func (r Rule) Validate() error {
	if r.Score != "" {
		if _, err := ParseScore(string(r.Score)); err != nil {
			return err
		}
	}
	if math.IsNaN(r.Threshold) || math.IsInf(r.Threshold, 0) {
		return fmt.Errorf("reject: rejection threshold %g is not finite", r.Threshold)
	}
	if r.Keep < 0 || r.Keep > 1 || math.IsNaN(r.Keep) {
		return fmt.Errorf("reject: rejection keep share %g is not in [0, 1]", r.Keep)
	}
	if r.Temperature < 0 || math.IsNaN(r.Temperature) || math.IsInf(r.Temperature, 0) {
		return fmt.Errorf("reject: calibration temperature %g is not a non-negative finite number", r.Temperature)
	}
	if r.Samples < 0 {
		return fmt.Errorf("reject: rejection calibrated on a negative number of samples %d", r.Samples)
	}
	for _, v := range []struct {
		name string
		v    float64
	}{{"top_mean", r.TopMean}, {"top_std", r.TopStd}, {"cos_mean", r.CosMean}, {"cos_std", r.CosStd}} {
		if math.IsNaN(v.v) || math.IsInf(v.v, 0) {
			return fmt.Errorf("reject: rejection %s %g is not finite", v.name, v.v)
		}
	}
	if r.Score.NeedsCosine() && !(r.TopStd > 0 && r.CosStd > 0) {
		return fmt.Errorf("reject: rejection score %s needs positive standard deviations, have top_std %g, cos_std %g", r.Score, r.TopStd, r.CosStd)
	}
	return nil
}

// ParseRule resolves a user's choice against the model's calibrated
// rejection: "auto" is calibrated itself, "off" rejects nothing, and a
// number is a threshold on the calibrated score (the top score when the
// model has none), keeping the calibrated temperature.
func ParseRule(s string, calibrated Rule) (Rule, error) {
	switch s {
	case "auto", "":
		return calibrated, nil
	case "off":
		return Rule{Temperature: calibrated.Temperature, Samples: calibrated.Samples}, nil
	}
	t, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(t) || math.IsInf(t, 0) {
		return Rule{}, fmt.Errorf("reject: unknown-rejection %q: want auto, off or a finite number", s)
	}
	r := calibrated
	if r.Score == "" {
		r.Score = ScoreTop
	}
	r.Threshold, r.Keep = t, 0
	return r, nil
}
