package reject

import (
	"fmt"
	"math"
)

// Calibration says how a model calibrates its rejection and its
// probabilities every time it learns samples (see flycl.Model.SetCalibration).
type Calibration struct {
	// Score the threshold applies to (default ScoreTopCosine).
	Score Score
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
	// (see flycl.Model.SetCalibration), instead of the exact ones. Off by default:
	// the extrapolated values are an approximation, not exchangeable
	// with a new sample's, so the split-conformal guarantee does not
	// cover them (the few-shot benchmark compares both: docs/UNKNOWN.md).
	ExtrapolateThreshold bool
}

// DefaultKeep is the share of known samples a calibrated rejection keeps.
const DefaultKeep = 0.95

// DefaultCalibrationSamples is Calibration.MaxSamples's default.
const DefaultCalibrationSamples = 256

// WithDefaults returns c with its zero fields set to their defaults.
func (c Calibration) WithDefaults() Calibration {
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

// PoolStride returns the values a calibration pool holds per sample for
// score k: 2 (top score, cosine) for a score that needs the cosine, else
// 1.
func (k Score) PoolStride() int {
	if k.NeedsCosine() {
		return 2
	}
	return 1
}

// FromPool returns the rule calibrated as c asks on pool, the
// leave-one-out open-set scores of recent samples (newest first;
// (top score, cosine) pairs for a score that needs the cosine, see
// PoolStride), with the probabilities' temperature: the split-conformal
// threshold of the pool's values (KeepThreshold), for ScoreTopCosine on
// the pairs standardized by their means and standard deviations. An
// empty pool gives a rule that rejects nothing (Keep, Temperature and
// Samples set); so does one whose rule does not validate.
func FromPool(c Calibration, pool []float32, temperature float64) Rule {
	per := c.Score.PoolStride()
	samples := len(pool) / per
	rule := Rule{Keep: c.Keep, Temperature: temperature, Samples: samples} // off while the pool is empty
	if samples >= 1 {
		r := rule
		r.Score = c.Score
		pv := make([]float64, samples)
		if per == 2 {
			top, cos := make([]float64, samples), make([]float64, samples)
			for i := range top {
				top[i], cos[i] = float64(pool[2*i]), float64(pool[2*i+1])
			}
			r.TopMean, r.TopStd = meanStd(top)
			r.CosMean, r.CosStd = meanStd(cos)
			for i := range pv {
				pv[i] = (top[i]-r.TopMean)/r.TopStd + (cos[i]-r.CosMean)/r.CosStd
			}
		} else {
			for i, v := range pool {
				pv[i] = float64(v)
			}
		}
		r.Threshold = KeepThreshold(pv, c.Keep)
		if r.Validate() == nil {
			rule = r
		}
	}
	return rule
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

// CalibrationSamples returns the samples of a learn of n whose exact
// leave-one-out scores a learner's calibration computes (in order), at
// most max of them spread evenly over the
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

// MaxCalibrationPool bounds a state's calibration pool (far above any
// MaxSamples in use; a decoder refuses more).
const MaxCalibrationPool = 1 << 16

// Validate checks a calibration whose defaults are filled in (see
// WithDefaults): a known score, a keep share in (0, 1], at least one
// sample.
func (c Calibration) Validate() error {
	if _, err := ParseScore(string(c.Score)); err != nil {
		return err
	}
	if !(c.Keep > 0 && c.Keep <= 1) {
		return fmt.Errorf("reject: calibration keep share %g is not in (0, 1]", c.Keep)
	}
	if c.MaxSamples < 1 {
		return fmt.Errorf("reject: calibration samples %d: want at least 1", c.MaxSamples)
	}
	return nil
}
