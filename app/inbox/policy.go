package inbox

import (
	"fmt"

	"github.com/flycl/flycl/internal/fielderr"
)

// Policy says which predictions an inbox keeps: those rejected as
// unknown, and those the model was least sure of.
type Policy struct {
	// Probability keeps a prediction whose calibrated probability is
	// below it (0: DefaultProbability; 1 keeps every prediction).
	Probability float64 `flag:"inbox-below"`
	// Margin keeps, for a model without calibrated probabilities, a
	// prediction whose two best scores differ by less than it (0:
	// DefaultMargin). Ridge scores are regressions onto one-hot targets:
	// the best is near 1 and the others near 0 for a clear case.
	Margin float64 `flag:"inbox-margin"`
}

// Defaults of Policy.
const (
	DefaultProbability = 0.6
	DefaultMargin      = 0.25
)

// Check checks the policy's values.
func (p Policy) Check() error {
	if !(p.Probability >= 0 && p.Probability <= 1) {
		return fmt.Errorf("inbox: keep-below probability %g is not in [0, 1]", p.Probability)
	}
	if !(p.Margin >= 0) || p.Margin > 1e30 {
		return fmt.Errorf("inbox: keep-below margin %g is not a non-negative number", p.Margin)
	}
	return nil
}

// Keep says whether a prediction is kept, and why. unknown says the
// model rejected it; probability is the calibrated probability of its
// best class (hasProbability false when the model has none); row holds
// its class scores.
func (p Policy) Keep(unknown bool, probability float64, hasProbability bool, row []float32) (Reason, bool) {
	if p.Probability == 0 {
		p.Probability = DefaultProbability
	}
	if p.Margin == 0 {
		p.Margin = DefaultMargin
	}
	switch {
	case unknown:
		return Unknown, true
	case hasProbability:
		if probability < p.Probability {
			return LowProbability, true
		}
		return "", false
	}
	top, second := float32(0), float32(0)
	for i, v := range row {
		switch {
		case i == 0 || v > top:
			if i > 0 {
				second = top
			}
			top = v
		case i == 1 || v > second:
			second = v
		}
	}
	if len(row) >= 2 && float64(top-second) < p.Margin {
		return LowMargin, true
	}
	return "", false
}

// A BoundError is an inbox bound or policy value out of its range, named
// by its field of Options or Policy ("MaxItems", "MaxBytes",
// "Probability" or "Margin"), with its value and the problem ("must be at
// least 1"). It is the one field error type of the module
// (internal/fielderr).
type BoundError = fielderr.Error

// outOfBounds is field's value v out of its range: "inbox: NAME V:
// PROBLEM".
func outOfBounds(field string, v any, problem string) *BoundError {
	return &BoundError{Field: field, Value: v, Problem: problem, Message: func(e *BoundError) string {
		return fmt.Sprintf("inbox: %s %v: %s", e.NameOf(e.Field), e.Value, e.Problem)
	}}
}

// CheckGiven checks bounds and a policy that a user gave explicitly (a
// command's flags or a configuration file), where zero is not "the
// default" but a value: it refuses what Open and Keep would replace by
// their defaults (a bound below 1, a probability or margin of 0) or could
// not honour (a probability above 1, a margin that is not a positive
// number). The first refused is a *BoundError.
func CheckGiven(o Options, p Policy) error {
	switch {
	case o.MaxItems < 1:
		return outOfBounds("MaxItems", o.MaxItems, "must be at least 1")
	case o.MaxBytes < 1:
		return outOfBounds("MaxBytes", o.MaxBytes, "must be at least 1")
	case !(p.Probability > 0 && p.Probability <= 1):
		return outOfBounds("Probability", p.Probability, "must be in (0, 1]")
	case !(p.Margin > 0) || p.Margin > 1e30:
		return outOfBounds("Margin", p.Margin, "must be positive")
	}
	return nil
}
