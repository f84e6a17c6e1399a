package reject

import (
	"math"
	"strings"
	"testing"
)

// TestRejectionString: the one line says the score, threshold, pool,
// the guaranteed share (and when the pool is too small for the share
// asked, how many it needs), the temperature, and why rejection is off.
func TestRejectionString(t *testing.T) {
	for _, tc := range []struct {
		r    Rule
		want []string
	}{
		{Rule{Score: ScoreTopCosine, Threshold: -2.5, Keep: 0.95, Samples: 90, Temperature: 0.1},
			[]string{"below top+cosine score -2.5", "keeps 95.6% ", "90 leave-one-out samples", "asked 95%", "temperature 0.1"}},
		{Rule{Score: ScoreTop, Threshold: 0.2, Keep: 0.95, Samples: 9, Temperature: 0.1},
			[]string{"keeps 90% ", "95% asked needs 19: the smallest score is the threshold"}},
		{Rule{Score: ScoreTop, Threshold: 0.2, Keep: 0.9, Samples: 8},
			[]string{"keeps 88.9% ", "90% asked needs 9", "no probabilities"}},
		{Rule{Score: ScoreTop, Threshold: 0.2, Keep: 1, Samples: 3},
			[]string{"keeps 75% ", "100% asked"}},
		{Rule{Score: ScoreTop, Threshold: 0.2}, []string{"set by hand: no guarantee"}},
		{Rule{Keep: 0.95}, []string{"unknown off: no calibration sample yet"}},
		{Rule{Temperature: 0.2}, []string{"unknown off; probabilities at temperature 0.2"}},
	} {
		s := tc.r.String()
		for _, w := range tc.want {
			if !strings.Contains(s, w) {
				t.Errorf("%+v: %q lacks %q", tc.r, s, w)
			}
		}
	}
}

// TestParseRejection: auto, off and numbers resolve against the model's
// rejection; anything else is an error.
func TestParseRejection(t *testing.T) {
	cal := Rule{Score: ScoreMargin, Threshold: 0.3, Keep: 0.95, Temperature: 0.1, Samples: 40}
	for _, tc := range []struct {
		in   string
		want Rule
		err  bool
	}{
		{"auto", cal, false},
		{"off", Rule{Temperature: 0.1, Samples: 40}, false},
		{"0.5", Rule{Score: ScoreMargin, Threshold: 0.5, Temperature: 0.1, Samples: 40}, false},
		{"NaN", Rule{}, true},
		{"yes", Rule{}, true},
	} {
		got, err := ParseRule(tc.in, cal)
		if (err != nil) != tc.err || (!tc.err && got != tc.want) {
			t.Errorf("%q: %+v, %v; want %+v (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
	if got, _ := ParseRule("0.2", Rule{}); got.Score != ScoreTop {
		t.Errorf("a threshold for an uncalibrated model applies to %q, want top", got.Score)
	}
}

// TestTopCosineRejectionValidate: the standardization of a top+cosine
// rejection must be finite with positive deviations; the other scores
// accept zero constants.
func TestTopCosineRejectionValidate(t *testing.T) {
	good := Rule{Score: ScoreTopCosine, Threshold: -1, Keep: 0.95, TopMean: 0.5, TopStd: 0.1, CosMean: 0.8, CosStd: 0.05}
	for _, tc := range []struct {
		name string
		r    Rule
		ok   bool
	}{
		{"good", good, true},
		{"top", Rule{Score: ScoreTop, Threshold: 0.2}, true},
		{"zero top std", func() Rule { r := good; r.TopStd = 0; return r }(), false},
		{"negative cos std", func() Rule { r := good; r.CosStd = -1; return r }(), false},
		{"NaN mean", func() Rule { r := good; r.CosMean = math.NaN(); return r }(), false},
		{"Inf on top", Rule{Score: ScoreTop, TopMean: math.Inf(1)}, false},
	} {
		if err := tc.r.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: Validate() = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
	if k, err := ParseScore("top+cosine"); err != nil || k != ScoreTopCosine {
		t.Errorf("ParseScore(top+cosine) = %q, %v", k, err)
	}
	// a threshold by hand applies to the fused value
	r, err := ParseRule("0.25", good)
	if err != nil || r.Score != ScoreTopCosine || r.Threshold != 0.25 || r.TopStd != good.TopStd {
		t.Errorf("ParseRule(0.25) = %+v, %v", r, err)
	}
}
