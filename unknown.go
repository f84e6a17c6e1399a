package flycl

import (
	"context"
	"fmt"
	"github.com/flycl/flycl/internal/minimize"
	"math"
	"slices"
	"strconv"
)

// OpenScore names a score, computed from a sample's class scores, that
// says how much the sample looks like one of the learned classes: the
// larger, the more "known". A rejection threshold applies to one of them.
type OpenScore string

const (
	// ScoreTop is the largest class score (the ridge output of the
	// predicted class). Among the scores computed from the class scores
	// alone it separates known from unknown classes as well as or better
	// than the others on CIFAR-10 with MobileNetV2 and SqueezeNet
	// features (docs/UNKNOWN.md).
	ScoreTop OpenScore = "top"
	// ScoreMargin is the largest class score minus the second largest
	// (the largest alone when the model has one class).
	ScoreMargin OpenScore = "margin"
	// ScoreEnergy is T·log Σ_c exp(s_c/T), the negative free energy of
	// the scores at the rejection's temperature T (the fitted one).
	ScoreEnergy OpenScore = "energy"
	// ScoreTopCosine is z(top) + z(cos): the top class score and the
	// cosine of the sample's code h to the nearest class sum of codes
	// (max over classes c of S_c·h / (‖S_c‖‖h‖), S_c the row of S), each
	// standardized by the mean and standard deviation of the calibration
	// pool's leave-one-out values (Rejection.TopMean … CosStd). It needs
	// the sample's code, not only its class scores: see Rejection.Value
	// and Predictor.ScoresCosines. The default: on CIFAR-10 with
	// MobileNetV2 and SqueezeNet features it separates known from unknown
	// classes better than the top score, and calibrated to keep 95% it
	// rejects more of the unknown (docs/UNKNOWN.md).
	ScoreTopCosine OpenScore = "top+cosine"
)

// OpenScores lists the scores a rejection can apply to.
var OpenScores = []OpenScore{ScoreTop, ScoreMargin, ScoreEnergy, ScoreTopCosine}

// NeedsCosine reports whether the score needs the cosine of the sample's
// code to the class sums besides its class scores.
func (k OpenScore) NeedsCosine() bool { return k == ScoreTopCosine }

// ParseOpenScore returns the score named s.
func ParseOpenScore(s string) (OpenScore, error) {
	for _, k := range OpenScores {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("flycl: unknown open-set score %q (want top, margin, energy or top+cosine)", s)
}

// Value returns the score of one sample's class scores row. Energy needs
// a positive temperature; with temperature <= 0 it is the largest score
// (the limit T → 0). A score that needs more than the class scores
// (NeedsCosine) is NaN here: Rejection.Value computes it.
func (k OpenScore) Value(row []float32, temperature float64) float64 {
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

// Rejection says when a prediction is "unknown" and how class scores map
// to calibrated probabilities. The zero value rejects nothing and
// calibrates nothing (models saved before rejection existed load with it).
type Rejection struct {
	// Score is what Threshold applies to ("" : rejection off).
	Score OpenScore `json:"score,omitempty"`
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
func (r Rejection) Enabled() bool { return r.Score != "" }

// Value returns the open-set score of a sample from its class scores row
// and the cosine of its code to the nearest class sum (see
// ScoreTopCosine; Predictor.ScoresCosines computes both). The cosine is
// read only by a score that needs it (Score.NeedsCosine); there, a NaN
// cosine (not computed) gives NaN.
func (r Rejection) Value(row []float32, cos float64) float64 {
	if r.Score.NeedsCosine() {
		return (ScoreTop.Value(row, 0)-r.TopMean)/r.TopStd + (cos-r.CosMean)/r.CosStd
	}
	return r.Score.Value(row, r.Temperature)
}

// Reject reports whether a sample with class scores row and cosine cos
// (as for Value) is unknown: its score is below the threshold, or not a
// number (a NaN cosine for a score that needs it rejects).
func (r Rejection) Reject(row []float32, cos float64) bool {
	return r.Enabled() && !(r.Value(row, cos) >= r.Threshold)
}

// Margin returns Value less the threshold: negative (how far below it)
// for a sample Reject answers "unknown". ok is false when rejection is off
// or the value is not a number.
func (r Rejection) Margin(row []float32, cos float64) (margin float64, ok bool) {
	v := r.Value(row, cos)
	if !r.Enabled() || math.IsNaN(v) {
		return 0, false
	}
	return v - r.Threshold, true
}

// Probability returns the calibrated probability of the top class of
// row, softmax(row/T) at its largest entry; ok is false when no
// temperature has been fitted.
func (r Rejection) Probability(row []float32) (p float64, ok bool) {
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
func (r Rejection) Guaranteed() float64 {
	if !r.Enabled() || !(r.Keep > 0) {
		return 0
	}
	return GuaranteedKeep(r.Samples, r.Keep)
}

// String describes the rejection in one line: the score, the threshold,
// the pool, the share it keeps, and the temperature.
func (r Rejection) String() string {
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
func (r Rejection) Validate() error {
	if r.Score != "" {
		if _, err := ParseOpenScore(string(r.Score)); err != nil {
			return err
		}
	}
	if math.IsNaN(r.Threshold) || math.IsInf(r.Threshold, 0) {
		return fmt.Errorf("flycl: rejection threshold %g is not finite", r.Threshold)
	}
	if r.Keep < 0 || r.Keep > 1 || math.IsNaN(r.Keep) {
		return fmt.Errorf("flycl: rejection keep share %g is not in [0, 1]", r.Keep)
	}
	if r.Temperature < 0 || math.IsNaN(r.Temperature) || math.IsInf(r.Temperature, 0) {
		return fmt.Errorf("flycl: calibration temperature %g is not a non-negative finite number", r.Temperature)
	}
	if r.Samples < 0 {
		return fmt.Errorf("flycl: rejection calibrated on a negative number of samples %d", r.Samples)
	}
	for _, v := range []struct {
		name string
		v    float64
	}{{"top_mean", r.TopMean}, {"top_std", r.TopStd}, {"cos_mean", r.CosMean}, {"cos_std", r.CosStd}} {
		if math.IsNaN(v.v) || math.IsInf(v.v, 0) {
			return fmt.Errorf("flycl: rejection %s %g is not finite", v.name, v.v)
		}
	}
	if r.Score.NeedsCosine() && !(r.TopStd > 0 && r.CosStd > 0) {
		return fmt.Errorf("flycl: rejection score %s needs positive standard deviations, have top_std %g, cos_std %g", r.Score, r.TopStd, r.CosStd)
	}
	return nil
}

// ParseRejection resolves a user's choice against the model's calibrated
// rejection: "auto" is calibrated itself, "off" rejects nothing, and a
// number is a threshold on the calibrated score (the top score when the
// model has none), keeping the calibrated temperature.
func ParseRejection(s string, calibrated Rejection) (Rejection, error) {
	switch s {
	case "auto", "":
		return calibrated, nil
	case "off":
		return Rejection{Temperature: calibrated.Temperature, Samples: calibrated.Samples}, nil
	}
	t, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(t) || math.IsInf(t, 0) {
		return Rejection{}, fmt.Errorf("flycl: unknown-rejection %q: want auto, off or a finite number", s)
	}
	r := calibrated
	if r.Score == "" {
		r.Score = ScoreTop
	}
	r.Threshold, r.Keep = t, 0
	return r, nil
}

// UnknownCalibration says how a model calibrates its rejection and its
// probabilities every time it learns samples (see Model.SetCalibration).
type UnknownCalibration struct {
	// Score the threshold applies to (default ScoreTopCosine).
	Score OpenScore
	// Keep is the share of the learned samples whose leave-one-out score
	// the threshold keeps (default DefaultKeep).
	Keep float64
	// MaxSamples bounds the leave-one-out samples per learn, taken evenly
	// over the learn (default DefaultCalibrationSamples), and the pool of
	// the most recent leave-one-out scores the threshold is taken from.
	// Their cost is about 2·MaxSamples·m² flops (two triangular solves
	// each).
	MaxSamples int
	// ExtrapolateThreshold takes the threshold from the leave-one-out
	// values extrapolated toward a new sample's, as the temperature is
	// (see SetCalibration), instead of the exact ones. Off by default:
	// the extrapolated values are an approximation, not exchangeable
	// with a new sample's, so the split-conformal guarantee does not
	// cover them (the few-shot benchmark compares both: docs/UNKNOWN.md).
	ExtrapolateThreshold bool
}

// DefaultKeep is the share of known samples a calibrated rejection keeps.
const DefaultKeep = 0.95

// DefaultCalibrationSamples is UnknownCalibration.MaxSamples's default.
const DefaultCalibrationSamples = 256

func (c UnknownCalibration) withDefaults() UnknownCalibration {
	if c.Score == "" {
		c.Score = ScoreTopCosine
	}
	if c.Keep == 0 {
		c.Keep = DefaultKeep
	}
	if c.MaxSamples == 0 {
		c.MaxSamples = DefaultCalibrationSamples
	}
	return c
}

// SetCalibration turns the calibration of the rejection threshold and of
// the probabilities' temperature on (c not nil; zero fields take their
// defaults) or off (nil; the current rejection stays). With it on, every
// learn of samples (LearnTask, LearnBatch, LearnTaskWithLambda) ends by
// computing the exact leave-one-out class scores of (up to MaxSamples of)
// its samples under the new classifier. Their open-set scores join a pool
// of the most recent ones (newest first, at most MaxSamples: earlier
// learns' scores were computed under the classifier of their time; for
// ScoreTopCosine, (top score, leave-one-out cosine) pairs, whose means
// and standard deviations standardize the fused value), and the
// threshold is the split-conformal one of the pool (KeepThreshold): new
// samples of the learned classes that are exchangeable with the pooled
// ones are kept with probability Rejection.Guaranteed ≥ Keep, or n/(n+1)
// when the pool of n is too small for Keep. Rejection is on from the
// first learn that has a sample of a class with at least two samples:
// the leave-one-out score of a class's only sample is that of a class the
// model has never seen, so such samples stay out of the pool and of the
// temperature fit. The temperature minimises the cross-entropy of the
// learn's leave-one-out scores, extrapolated toward those of a new sample
// of the class (jackknifeExtrapolate: a leave-one-out score comes from a
// model of one sample of the class fewer, and probabilities fitted on it
// are underconfident with a few samples per class), against smoothed
// targets, bounded below (FitTemperature; a learn of one class keeps the
// previous one); the threshold is taken from the exact leave-one-out
// scores (ExtrapolateThreshold takes it from the extrapolated ones). A learn
// from statistics alone (LearnStats) has no samples: it turns rejection
// off and empties the pool. Forgetting keeps the last calibration.
func (m *Model) SetCalibration(c *UnknownCalibration) error {
	if c == nil {
		m.calib = nil
		return nil
	}
	v := c.withDefaults()
	if _, err := ParseOpenScore(string(v.Score)); err != nil {
		return err
	}
	if !(v.Keep > 0 && v.Keep <= 1) {
		return fmt.Errorf("flycl: calibration keep share %g is not in (0, 1]", v.Keep)
	}
	if v.MaxSamples < 1 {
		return fmt.Errorf("flycl: calibration samples %d: want at least 1", v.MaxSamples)
	}
	m.calib = &v
	return nil
}

// Rejection returns the model's current rejection (zero: off).
func (m *Model) Rejection() Rejection { return m.rej }

// SetRejection replaces the model's rejection (for a threshold set by
// hand; see ParseRejection). It counts as a change of the model.
func (m *Model) SetRejection(r Rejection) error {
	if err := r.Validate(); err != nil {
		return err
	}
	m.rej = r
	m.version++
	return nil
}

// LeaveOneOut returns the exact leave-one-out class scores (rows of
// Classes() columns) and the class index of each sample, of the samples
// the last calibration used (nil before any).
func (m *Model) LeaveOneOut() (scores []float32, classes []int) {
	if len(m.loo) != len(m.looIdx)*len(m.labels) { // a class was forgotten since
		return nil, nil
	}
	return slices.Clone(m.loo), slices.Clone(m.looIdx)
}

// calibrate runs the calibration of SetCalibration after a learn whose n
// codes h (n×m, as learned) had class indices idx. It uses the
// accumulator's Cholesky factor of G + λI from the solve that just ended
// (ridge.Accumulator.FactorLambda). A failure leaves the rejection off
// rather than stale.
func (m *Model) calibrate(ctx context.Context, h []float32, n int, idx []int) {
	if m.calib == nil {
		return
	}
	c := *m.calib
	prevT := m.rej.Temperature
	// the pool holds one value per sample, or (top, cosine) pairs for a
	// score that needs the cosine: Samples tells which it holds while
	// rejection is off
	per := poolStride(c.Score)
	if m.rej.Score != "" && m.rej.Score != c.Score || len(m.pool) != per*m.rej.Samples {
		m.pool = nil // scores of another kind
	}
	m.rej, m.loo, m.looIdx = Rejection{}, nil, nil
	if m.acc.FactorLambda() != m.lambda { // no factor of G + λI at hand: nothing exact to compute
		m.pool = nil
		return
	}
	sel := evenly(n, c.MaxSamples)
	loo, full, lev, err := m.looScores(ctx, h, sel, idx)
	if err != nil {
		m.pool = nil
		return
	}
	nc := len(m.labels)
	cls := make([]int, len(sel))
	for i, s := range sel {
		cls[i] = idx[s]
	}
	// the rows of samples whose class has at least two: a class's only
	// sample left out leaves the class unlearned, and its leave-one-out
	// score is that of an unknown class (its cosine has no class sum
	// left). Those rows stay in LeaveOneOut but out of the calibration.
	counts := m.ClassCounts()
	var use []int
	for i, c := range cls {
		if c >= len(counts) || counts[c] < 0 || counts[c] >= 2 {
			use = append(use, i)
		}
	}
	// the temperature is fitted on the leave-one-out rows extrapolated
	// toward a new sample's (jackknifeExtrapolate); the threshold is taken
	// from the exact ones (or the extrapolated ones, ExtrapolateThreshold)
	cos := LeaveOneOutCosines(m.acc.S(), nc, m.cfg.M, h, sel, idx)
	ext, extCos, err := jackknifeExtrapolate(ctx, loo, full, lev, cos, nc, m.cfg.M, h, sel, idx, m.acc.S(), counts, func(pj []int) []float64 {
		return m.hatColumns(h, sel, pj)
	})
	if err != nil {
		m.pool = nil
		return
	}
	if firstNonFinite(ext) >= 0 { // a near-singular pair: keep the exact rows
		ext, extCos = loo, cos
	}
	cal := loo
	if c.ExtrapolateThreshold {
		cal, cos = ext, extCos
	}
	ul, uc := make([]float32, 0, len(use)*nc), make([]int, len(use))
	for j, i := range use {
		ul, uc[j] = append(ul, ext[i*nc:(i+1)*nc]...), cls[i]
	}
	temp := FitTemperature(ul, nc, uc)
	if temp == 0 {
		temp = prevT
	}
	vals := make([]float32, per*len(use))
	if per == 2 {
		for j, i := range use {
			vals[2*j], vals[2*j+1] = float32(ScoreTop.Value(cal[i*nc:(i+1)*nc], 0)), float32(cos[i])
		}
	} else {
		for j, i := range use {
			vals[j] = float32(c.Score.Value(cal[i*nc:(i+1)*nc], temp))
		}
	}
	m.pool = append(vals, m.pool...)[:min(len(vals)+len(m.pool), per*c.MaxSamples)]
	m.loo, m.looIdx = loo, cls
	samples := len(m.pool) / per
	m.rej = Rejection{Keep: c.Keep, Temperature: temp, Samples: samples} // off while the pool is empty
	if samples >= 1 {
		r := m.rej
		r.Score = c.Score
		pv := make([]float64, samples)
		if per == 2 {
			top, cos := make([]float64, samples), make([]float64, samples)
			for i := range top {
				top[i], cos[i] = float64(m.pool[2*i]), float64(m.pool[2*i+1])
			}
			r.TopMean, r.TopStd = meanStd(top)
			r.CosMean, r.CosStd = meanStd(cos)
			for i := range pv {
				pv[i] = (top[i]-r.TopMean)/r.TopStd + (cos[i]-r.CosMean)/r.CosStd
			}
		} else {
			for i, v := range m.pool {
				pv[i] = float64(v)
			}
		}
		r.Threshold = KeepThreshold(pv, c.Keep)
		if r.Validate() == nil {
			m.rej = r
		}
	}
}

// poolStride returns the values the calibration pool holds per sample
// for score k: 2 (top score, cosine) for a score that needs the cosine,
// else 1.
func poolStride(k OpenScore) int {
	if k.NeedsCosine() {
		return 2
	}
	return 1
}

// meanStd returns the mean and the (population) standard deviation of
// vals, the deviation 1 when it is 0 (all equal: nothing to scale).
func meanStd(vals []float64) (mean, std float64) {
	for _, v := range vals {
		mean += v
	}
	mean /= float64(len(vals))
	for _, v := range vals {
		std += (v - mean) * (v - mean)
	}
	std = math.Sqrt(std / float64(len(vals)))
	if !(std > 0) {
		std = 1
	}
	return mean, std
}

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
	out := make([]float64, len(sel))
	x := make([]float64, m)
	for k, i := range sel {
		for j, v := range h[i*m : (i+1)*m] {
			x[j] = float64(v)
		}
		out[k], _ = ClassCosine(x, sums, norms, idx[i])
	}
	return out
}

// CalibrationPool returns the pool of recent leave-one-out open-set
// scores the threshold was taken from (newest first; see SetCalibration).
func (m *Model) CalibrationPool() []float32 { return slices.Clone(m.pool) }

// RestoreCalibration puts back a calibration the model had before: the
// rejection r and the pool of leave-one-out scores it was taken from, as
// Rejection and CalibrationPool returned them then. An undo calls it
// after Unlearn, with the calibration from before the learn it takes
// back, so that the model rejects and calibrates its probabilities
// exactly as that version did (Unlearn alone keeps the newer ones). It is
// part of that change: it does not count as one (the version stays). The
// leave-one-out scores of the last calibration (LeaveOneOut) are not
// restored: they are forgotten, as by a model loaded from its file.
//
// A rejection that does not validate, or a pool that is longer than
// MaxCalibrationPool or holds a value that is not finite, is refused
// with the model unchanged.
func (m *Model) RestoreCalibration(r Rejection, pool []float32) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if len(pool) > MaxCalibrationPool {
		return fmt.Errorf("flycl: calibration pool of %d scores, more than %d", len(pool), MaxCalibrationPool)
	}
	if i := firstNonFinite(pool); i >= 0 {
		return fmt.Errorf("flycl: calibration pool score %d is %v", i, pool[i])
	}
	m.rej, m.pool, m.loo, m.looIdx = r, slices.Clone(pool), nil, nil
	return nil
}

// CalibrationSamples returns the samples of a learn of n whose exact
// leave-one-out scores the calibration computes (the rows of
// LeaveOneOut, in order), at most max of them spread evenly over the
// learn: for a caller that calibrates scores of its own on the same
// samples.
func CalibrationSamples(n, max int) []int { return evenly(n, max) }

// evenly returns min(n, k) indices spread evenly over 0..n-1.
func evenly(n, k int) []int {
	k = min(n, k)
	out := make([]int, k)
	for i := range out {
		out[i] = i * n / k
	}
	return out
}

// looScores returns the exact leave-one-out class scores of the rows sel
// of the codes h, learned with class indices idx: the scores each would
// get from the classifier solved without it. For a sample with code h,
// one-hot target y, scores f = C h and leverage a = hᵀ(G + λI)⁻¹h, removing
// it from G and S (a rank-one change, Sherman-Morrison) gives the scores
// (f − a·y)/(1 − a): exact for any sample in the statistics, whatever
// task it came with, since C is the solution over all of them.
// It also returns the full model's class scores of the rows sel and
// their leverages a.
func (m *Model) looScores(ctx context.Context, h []float32, sel []int, idx []int) (loo, full []float32, levs []float64, err error) {
	mm, nc, k := m.cfg.M, len(m.labels), len(sel)
	hs := make([]float32, k*mm)
	for i, s := range sel {
		copy(hs[i*mm:(i+1)*mm], h[s*mm:(s+1)*mm])
	}
	// The leverages of a learn that kept the factor come with its
	// low-rank change (ridge.Accumulator.Leverages); otherwise two
	// triangular solves per sample give them.
	lev := m.acc.Leverages()
	var z []float32
	if len(lev) != len(h)/mm {
		lev = nil
		z = slices.Clone(hs)
		m.acc.SolveRows(z, k)
	}
	out := make([]float32, k*nc)
	scoreRows(hs, k, mm, m.coef, nc, out)
	full = slices.Clone(out)
	levs = make([]float64, k)
	for i, s := range sel {
		a := 0.0
		if lev != nil {
			a = lev[s]
		} else {
			hr, zr := hs[i*mm:(i+1)*mm], z[i*mm:(i+1)*mm]
			for j, v := range hr {
				a += float64(v) * float64(zr[j])
			}
		}
		if !(a >= 0 && a < 1) {
			return nil, nil, nil, fmt.Errorf("flycl: leverage %g of sample %d is outside [0, 1)", a, s)
		}
		levs[i] = a
		row := out[i*nc : (i+1)*nc]
		for j := range row {
			f := float64(row[j])
			if j == idx[s] {
				f -= a
			}
			row[j] = float32(f / (1 - a))
		}
	}
	if i := firstNonFinite(out); i >= 0 {
		return nil, nil, nil, fmt.Errorf("flycl: leave-one-out score %d is %v", i, out[i])
	}
	return out, full, levs, ctx.Err()
}

// hatColumns returns hᵢᵀ(G+λI)⁻¹hⱼ for the rows i of sel and the rows
// pj (indices into sel) of the codes h: len(sel)×len(pj), two triangular
// solves per column.
func (m *Model) hatColumns(h []float32, sel, pj []int) []float64 {
	mm, k, np := m.cfg.M, len(sel), len(pj)
	z := make([]float32, np*mm)
	for q, j := range pj {
		copy(z[q*mm:(q+1)*mm], h[sel[j]*mm:(sel[j]+1)*mm])
	}
	m.acc.SolveRows(z, np)
	out := make([]float64, k*np)
	for i, s := range sel {
		hi := h[s*mm : (s+1)*mm]
		for q := range np {
			zq := z[q*mm : (q+1)*mm]
			d := 0.0
			for t, v := range hi {
				d += float64(v) * float64(zq[t])
			}
			out[i*np+q] = d
		}
	}
	return out
}

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

// uncalibrate turns rejection off after a change that leaves no samples
// to calibrate on.
func (m *Model) uncalibrate() { m.rej, m.loo, m.looIdx, m.pool = Rejection{}, nil, nil, nil }

// MaxCalibrationPool bounds a state's calibration pool (far above any
// MaxSamples in use; a decoder refuses more).
const MaxCalibrationPool = 1 << 16
