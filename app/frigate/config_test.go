package frigate

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestConfigCheck(t *testing.T) {
	for _, tc := range []struct {
		minBox, minProb float64
		want            string // a part of the error ("": none)
		field           string // the *FieldError's field
	}{
		{0, 0, "", ""},
		{64, 1, "", ""},
		{0.5, 0.5, "", ""},
		{-1, 0, "MinBox must be ≥ 0, got -1", "MinBox"},
		{math.NaN(), 0, "MinBox", "MinBox"},
		{0, -0.1, "MinProbability must be in [0, 1], got -0.1", "MinProbability"},
		{0, 1.5, "MinProbability", "MinProbability"},
		{0, math.NaN(), "MinProbability", "MinProbability"},
	} {
		cfg := Config{Frigate: "http://127.0.0.1:1", Classify: redness{}, MinBox: tc.minBox, MinProbability: tc.minProb}
		err := cfg.Check()
		_, nerr := New(cfg)
		for what, err := range map[string]error{"Check": err, "New": nerr} {
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("min box %g, min probability %g: %s: %v; want %q", tc.minBox, tc.minProb, what, err, tc.want)
			}
			var fe *FieldError
			if err != nil && (!errors.As(err, &fe) || fe.Field != tc.field) {
				t.Errorf("min box %g, min probability %g: %s: %#v, want a *FieldError on %s", tc.minBox, tc.minProb, what, err, tc.field)
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

// TestFieldErrorName: a command's names replace the fields' in the
// message; a bad Frigate URL is a *FieldError on Frigate.
func TestFieldErrorName(t *testing.T) {
	err := Config{MinBox: -2}.Check()
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("%v: not a *FieldError", err)
	}
	fe.Name = func(f string) string { return "--min-box" }
	if got, want := fe.Error(), "--min-box must be ≥ 0, got -2"; got != want {
		t.Errorf("named: %q, want %q", got, want)
	}
	_, err = New(Config{Frigate: "ftp://x", Classify: redness{}})
	if !errors.As(err, &fe) || fe.Field != "Frigate" || !strings.Contains(err.Error(), `"ftp://x": want http://HOST:PORT`) {
		t.Errorf("New with ftp://x: %v, want a *FieldError on Frigate", err)
	}
}
