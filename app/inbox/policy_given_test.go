package inbox

import (
	"errors"
	"math"
	"testing"
)

// TestCheckGiven: each bound and policy value on both sides of its
// range; the first refused is named by its field, and what passes is what
// Open and Keep honour as given (not replaced by a default).
func TestCheckGiven(t *testing.T) {
	ok := Options{MaxItems: 1, MaxBytes: 1}
	okP := Policy{Probability: 1, Margin: 1e-9}
	for _, tc := range []struct {
		name  string
		o     Options
		p     Policy
		field string // "" when accepted
	}{
		{"smallest accepted", ok, okP, ""},
		{"defaults", Options{MaxItems: DefaultMaxItems, MaxBytes: DefaultMaxBytes}, Policy{DefaultProbability, DefaultMargin}, ""},
		{"no items", Options{MaxItems: 0, MaxBytes: 1}, okP, "MaxItems"},
		{"negative items", Options{MaxItems: -1, MaxBytes: 1}, okP, "MaxItems"},
		{"no bytes", Options{MaxItems: 1, MaxBytes: 0}, okP, "MaxBytes"},
		{"probability 0", ok, Policy{Probability: 0, Margin: 1}, "Probability"},
		{"probability above 1", ok, Policy{Probability: 1.0000001, Margin: 1}, "Probability"},
		{"probability NaN", ok, Policy{Probability: math.NaN(), Margin: 1}, "Probability"},
		{"margin 0", ok, Policy{Probability: 0.5, Margin: 0}, "Margin"},
		{"margin negative", ok, Policy{Probability: 0.5, Margin: -1}, "Margin"},
		{"margin infinite", ok, Policy{Probability: 0.5, Margin: math.Inf(1)}, "Margin"},
		{"margin NaN", ok, Policy{Probability: 0.5, Margin: math.NaN()}, "Margin"},
		{"items first", Options{}, Policy{}, "MaxItems"},
	} {
		err := CheckGiven(tc.o, tc.p)
		var be *BoundError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.field != "" && !errors.As(err, &be):
			t.Errorf("%s: %v, want a *BoundError on %s", tc.name, err, tc.field)
		case tc.field != "" && be.Field != tc.field:
			t.Errorf("%s: refused %s (%v), want %s", tc.name, be.Field, err, tc.field)
		}
		// what CheckGiven accepts, the library's own Check accepts too
		if tc.field == "" {
			if err := tc.p.Check(); err != nil {
				t.Errorf("%s: CheckGiven accepts a policy Policy.Check refuses: %v", tc.name, err)
			}
		}
	}
}
