package reject

import (
	"math"
	"slices"
	"sort"
	"strconv"
)

// Typical is a rejection's calibration pool in a person's units: the
// open-set values (Rule.Value) of the learned samples' leave-one-out
// scores, sorted, against which any value reads as a share of the learned
// samples ("less typical than 97% of the photos it learned") rather than
// a raw score.
type Typical struct {
	values []float64 // ascending
}

// Typicality returns r's pool (as Model.State's CalibrationPool holds it:
// Score.PoolStride values per sample) as a Typical, the values
// standardized as r standardizes them (ScoreTopCosine). ok is false when
// rejection is off or the pool is empty or does not fit r's score.
func (r Rule) Typicality(pool []float32) (t Typical, ok bool) {
	per := r.Score.PoolStride()
	if !r.Enabled() || per == 0 || len(pool) == 0 || len(pool)%per != 0 {
		return Typical{}, false
	}
	n := len(pool) / per
	v := make([]float64, n)
	for i := range v {
		if per == 2 {
			v[i] = (float64(pool[2*i])-r.TopMean)/r.TopStd + (float64(pool[2*i+1])-r.CosMean)/r.CosStd
		} else {
			v[i] = float64(pool[i])
		}
		if math.IsNaN(v[i]) {
			return Typical{}, false
		}
	}
	slices.Sort(v)
	return Typical{values: v}, true
}

// Samples is the number of learned samples in the pool.
func (t Typical) Samples() int { return len(t.values) }

// MoreTypical returns the share of the pool's samples whose value is
// strictly above v: a sample of value v is less typical of what was
// learned than that share of the learned samples (0: at least as typical
// as every one of them; 1: less typical than all).
func (t Typical) MoreTypical(v float64) float64 {
	if len(t.values) == 0 || math.IsNaN(v) {
		return math.NaN()
	}
	above := len(t.values) - sort.Search(len(t.values), func(i int) bool { return t.values[i] > v })
	return float64(above) / float64(len(t.values))
}

// Words says a share from MoreTypical as a person reads it, about a photo
// (noun: "photos"): "less typical than 97% of the 15 photos it learned",
// or "as typical as the photos it learned" when no learned sample is more
// typical.
func (t Typical) Words(share float64, noun string) string {
	if !(share > 0) {
		return "as typical as the " + noun + " it learned"
	}
	if share >= 1 {
		return "less typical than every one of the " + strconv.Itoa(len(t.values)) + " " + noun + " it learned"
	}
	return "less typical than " + pctString(share) + " of the " + strconv.Itoa(len(t.values)) + " " + noun + " it learned"
}

// AtLeast returns the share of the pool's samples whose value is at least
// v. For a rule's threshold it says the rule in a person's units: a
// sample is unknown exactly when it is less typical than that share of
// the learned samples (MoreTypical of its value is at least AtLeast of
// the threshold, when the threshold is one of the pooled values, as a
// calibrated one is).
func (t Typical) AtLeast(v float64) float64 {
	if len(t.values) == 0 || math.IsNaN(v) {
		return math.NaN()
	}
	return float64(len(t.values)-sort.SearchFloat64s(t.values, v)) / float64(len(t.values))
}
