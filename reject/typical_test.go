package reject

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTypicalityCountsThePool: MoreTypical is the share of pooled
// values strictly above v, counted by brute force over the pool, for the
// plain scores and for ScoreTopCosine's standardized pairs; a calibrated
// rule's threshold keeps at least Keep of the pool.
func TestTypicalityCountsThePool(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, score := range []Score{ScoreTop, ScoreTopCosine} {
		per := score.PoolStride()
		pool := make([]float32, 40*per)
		for i := range pool {
			pool[i] = float32(r.NormFloat64())
		}
		rule := FromPool(Calibration{Score: score, Keep: 0.9}, pool, 1)
		typ, ok := rule.Typicality(pool)
		if !ok || typ.Samples() != 40 {
			t.Fatalf("%s: Typicality %v, %d samples", score, ok, typ.Samples())
		}
		vals := make([]float64, 40)
		for i := range vals {
			if per == 2 {
				vals[i] = (float64(pool[2*i])-rule.TopMean)/rule.TopStd + (float64(pool[2*i+1])-rule.CosMean)/rule.CosStd
			} else {
				vals[i] = float64(pool[i])
			}
		}
		for _, v := range append([]float64{-10, 10, rule.Threshold}, vals...) {
			above := 0
			for _, w := range vals {
				if w > v {
					above++
				}
			}
			if got, want := typ.MoreTypical(v), float64(above)/40; got != want {
				t.Errorf("%s: MoreTypical(%g) = %g, counted %g", score, v, got, want)
			}
		}
		// the threshold is a pooled value that keeps at least Keep of the
		// pool: those above it and itself
		if kept := typ.MoreTypical(rule.Threshold) + 1.0/40; kept < 0.9-1e-12 {
			t.Errorf("%s: the threshold keeps %g of the pool, want >= 0.9", score, kept)
		}
		// the rule in words is the rule: a pooled value is rejected
		// exactly when it is less typical than AtLeast(threshold) of the pool
		at := typ.AtLeast(rule.Threshold)
		for _, v := range vals {
			if rejected, inWords := v < rule.Threshold, typ.MoreTypical(v) >= at; rejected != inWords {
				t.Errorf("%s: value %g: rejected %v, less typical than %g of the pool %v", score, v, rejected, at, inWords)
			}
		}
	}
	if _, ok := (Rule{}).Typicality([]float32{1, 2}); ok {
		t.Error("a rule that rejects nothing has a typicality")
	}
	if _, ok := (Rule{Score: ScoreTopCosine, TopStd: 1, CosStd: 1}).Typicality([]float32{1, 2, 3}); ok {
		t.Error("an odd pool of pairs has a typicality")
	}
	var typ Typical
	if !math.IsNaN(typ.MoreTypical(0)) {
		t.Error("an empty pool gives a share")
	}
}

func TestTypicalWords(t *testing.T) {
	typ := Typical{values: []float64{1, 2, 3, 4}}
	if got := typ.Words(typ.MoreTypical(1.5), "photos"); got != "less typical than 75% of the 4 photos it learned" {
		t.Errorf("got %q", got)
	}
	if got := typ.Words(typ.MoreTypical(9), "photos"); got != "as typical as the photos it learned" {
		t.Errorf("got %q", got)
	}
}
