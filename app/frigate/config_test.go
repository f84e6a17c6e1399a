package frigate

import (
	"math"
	"strings"
	"testing"
)

func TestConfigCheck(t *testing.T) {
	for _, tc := range []struct {
		minBox, minProb float64
		want            string // a part of the error ("": none)
	}{
		{0, 0, ""},
		{64, 1, ""},
		{0.5, 0.5, ""},
		{-1, 0, "--min-box must be ≥ 0, got -1"},
		{math.NaN(), 0, "--min-box"},
		{0, -0.1, "--min-probability must be in [0, 1], got -0.1"},
		{0, 1.5, "--min-probability"},
		{0, math.NaN(), "--min-probability"},
	} {
		cfg := Config{Frigate: "http://127.0.0.1:1", Classify: redness{}, MinBox: tc.minBox, MinProbability: tc.minProb}
		err := cfg.Check()
		_, nerr := New(cfg)
		for what, err := range map[string]error{"Check": err, "New": nerr} {
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("min box %g, min probability %g: %s: %v; want %q", tc.minBox, tc.minProb, what, err, tc.want)
			}
		}
	}
}

// TestLabellerTrimsNames: labels and cameras given as "bird, car" (with
// spaces, an empty name) filter as the names themselves.
func TestLabellerTrimsNames(t *testing.T) {
	l, err := New(Config{Frigate: "http://127.0.0.1:1", Classify: redness{}, Labels: []string{" bird", " "}, Cameras: []string{"front "}})
	if err != nil {
		t.Fatal(err)
	}
	big := [4]int{10, 10, 110, 90}
	l.Handle(msg("new", "a", "front", "bird", big, 1, true))
	l.Handle(msg("new", "car", "front", "car", big, 1, true))
	l.Handle(msg("new", "b", "back", "bird", big, 1, true))
	s := l.Stats()
	if s.Queued != 1 || s.Skipped[SkipLabel] != 1 || s.Skipped[SkipCamera] != 1 {
		t.Errorf("stats %+v: want 1 queued (the bird at front), 1 skipped for its label, 1 for its camera", s)
	}
}
