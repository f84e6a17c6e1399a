package reject

import (
	"math"
	"testing"
)

// TestOpenScoreValues checks each score against its definition on rows
// worked by hand.
func TestOpenScoreValues(t *testing.T) {
	for _, tc := range []struct {
		k    Score
		row  []float32
		T    float64
		want float64
	}{
		{ScoreTop, []float32{0.2, 0.9, -1}, 0, 0.9},
		{ScoreMargin, []float32{0.2, 0.9, -1}, 0, 0.7},
		{ScoreMargin, []float32{0.9, 0.9}, 0, 0},
		{ScoreMargin, []float32{0.4}, 0, 0.4},
		{ScoreEnergy, []float32{0, 0}, 1, math.Log(2)},
		{ScoreEnergy, []float32{1, 2, 3}, 0.5, 0.5 * math.Log(math.Exp(2)+math.Exp(4)+math.Exp(6))},
		{ScoreEnergy, []float32{1, 2, 3}, 0, 3},
	} {
		if got := tc.k.Value(tc.row, tc.T); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("%s%v T=%g: %g, want %g", tc.k, tc.row, tc.T, got, tc.want)
		}
	}
	r := Rule{Score: ScoreTop, Threshold: 0.5, Temperature: 0.25}
	if !r.Reject([]float32{0.4, 0.1}, 0) || r.Reject([]float32{0.5, 0.1}, 0) {
		t.Error("top score 0.4 must be rejected and 0.5 kept at threshold 0.5")
	}
	p, ok := r.Probability([]float32{0.5, 0.1})
	if want := 1 / (1 + math.Exp((float64(float32(0.1))-float64(float32(0.5)))/0.25)); !ok || math.Abs(p-want) > 1e-12 {
		t.Errorf("probability %g (%v), want %g", p, ok, want)
	}
	if (Rule{}).Reject([]float32{-5}, 0) {
		t.Error("the zero rejection rejected a sample")
	}
}
