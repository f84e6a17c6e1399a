package reject

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// WithKeep returns r with its threshold taken again from the
// calibration pool (as Model.State's CalibrationPool holds it) to keep
// the share keep of the learned classes' samples: the split-conformal
// threshold of the pool's values at keep (KeepThreshold), the share a
// person asks for ("keep 90% of what it knows") instead of a raw score.
// At the share the model was calibrated to it gives the model's own
// threshold. It fails when r rejects nothing (no calibration yet) or
// the pool does not fit r's score.
func (r Rule) WithKeep(pool []float32, keep float64) (Rule, error) {
	if !(keep > 0 && keep <= 1) {
		return Rule{}, fmt.Errorf("reject: keep share %g is not in (0, 1]", keep)
	}
	t, ok := r.Typicality(pool)
	if !ok {
		return Rule{}, fmt.Errorf("reject: the model has no calibrated rejection to keep a share with (learn two photos of a class first)")
	}
	r.Threshold, r.Keep, r.Samples = KeepThreshold(t.values, keep), keep, t.Samples()
	return r, nil
}

// KeepPrefix starts a rejection choice given as a share to keep:
// "keep:0.9" (ParseKeep).
const KeepPrefix = "keep:"

// ParseKeep reads a rejection choice "keep:SHARE" (SHARE in (0, 1], or
// a percentage "keep:90%"); ok is false for any other choice.
func ParseKeep(s string) (keep float64, ok bool, err error) {
	v, found := strings.CutPrefix(s, KeepPrefix)
	if !found {
		return 0, false, nil
	}
	v = strings.TrimSpace(v)
	scale := 1.0
	if p, pct := strings.CutSuffix(v, "%"); pct {
		v, scale = strings.TrimSpace(p), 0.01
	}
	k, err := strconv.ParseFloat(v, 64)
	k *= scale
	if err != nil || math.IsNaN(k) || !(k > 0 && k <= 1) {
		return 0, true, fmt.Errorf("reject: %q: want keep:SHARE, a share of known photos in (0, 1] such as keep:0.95 or keep:95%%", s)
	}
	return k, true, nil
}
