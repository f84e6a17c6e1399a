package answer

import (
	"context"
	"fmt"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/reject"
)

// UnknownAnswer is a prediction's answer when the model's rejection says
// the input is none of its classes.
const UnknownAnswer = "unknown"

// A Prediction is one input's answer.
type Prediction struct {
	// Top are the best classes by score, best first.
	Top []flycl.Ranked `json:"top"`
	// Answer is the top class's name, or UnknownAnswer when the rejection
	// says the input is none of the model's classes.
	Answer  string `json:"answer"`
	Unknown bool   `json:"unknown"`
	// Probability is the calibrated probability of the top class (nil
	// for a model without a fitted temperature): for an "unknown" answer,
	// that of the best guess Top[0].
	Probability *float64 `json:"probability,omitempty"`
	// Margin is the open-set score less the threshold: negative (how far
	// below) for an "unknown" answer (nil when rejection is off).
	Margin *float64 `json:"unknown_margin,omitempty"`
	// MoreTypical is the share of the learned samples (the leave-one-out
	// pool the threshold was taken from) whose open-set score is above
	// this input's: 0.97 reads "less typical than 97% of the photos it
	// learned" (nil without a pool; AddTypicality sets it). The raw score
	// is still Margin + the threshold.
	MoreTypical *float64 `json:"more_typical_share,omitempty"`
}

// AddTypicality sets p's MoreTypical from its margin under rej (value =
// margin + threshold) and typ, the model's pool in a person's units
// (reject.Rule.Typicality of the rule the pool was taken with, which
// must standardize values as rej does: the same score).
func (p *Prediction) AddTypicality(rej reject.Rule, typ reject.Typical) {
	if typ.Samples() == 0 || p.Margin == nil {
		return
	}
	v := typ.MoreTypical(*p.Margin + rej.Threshold)
	p.MoreTypical = &v
}

// Predict answers each of the n×d features x with p: its top classes (at
// most top), and "unknown" where rej rejects it (reject.ParseRule
// gives rej from the model's calibrated p.Rejection()).
func Predict(ctx context.Context, p *flycl.Predictor, rej reject.Rule, x []float32, top int) ([]Prediction, error) {
	nc := p.Classes().Len()
	if nc == 0 {
		return nil, fmt.Errorf("answer: %w: the model has no classes", flycl.ErrNotTrained)
	}
	scores, cos, err := p.ScoresCosines(ctx, x)
	if err != nil {
		return nil, err
	}
	ranked := p.Rank(scores, top)
	preds := make([]Prediction, len(ranked))
	for i, r := range ranked {
		preds[i] = Decide(r[0].Name, rej, scores[i*nc:(i+1)*nc], cos[i])
		preds[i].Top = r
	}
	return preds, nil
}

// Decide is the answer for one input whose best class is top, from its
// row of class scores and its cosine (flycl.Predictor.ScoresCosines):
// top, or UnknownAnswer when rej rejects the input or top is a reserved
// class (IsReserved); the calibrated
// probability of the top class and the margin over the threshold when rej
// has them. The answer's Top is left to the caller. flycl predict and the
// server answer through it.
func Decide(top string, rej reject.Rule, row []float32, cos float64) Prediction {
	p := Prediction{Answer: top, Unknown: rej.Reject(row, cos) || IsReserved(top)}
	if p.Unknown {
		p.Answer = UnknownAnswer
	}
	if v, ok := rej.Probability(row); ok {
		p.Probability = &v
	}
	if v, ok := rej.Margin(row, cos); ok {
		p.Margin = &v
	}
	return p
}

// Score is an accuracy over the labelled samples of the classes a model
// knows.
type Score struct {
	Correct   int     `json:"correct"`
	Evaluated int     `json:"evaluated"`
	Unknown   int     `json:"unknown_class"` // labelled samples of classes the model does not have
	Accuracy  float64 `json:"accuracy"`
	// Rejected counts the evaluated samples answered "unknown";
	// UnknownRejected the samples of classes the model does not have
	// that were.
	Rejected        int `json:"rejected"`
	UnknownRejected int `json:"unknown_class_rejected"`
}

// Accuracy scores preds against their true classes truth (one per
// prediction) among the model's classes: a prediction is correct when
// its top class is the truth (an "unknown" answer still counts its best
// guess; Rejected counts those). Samples of other classes are counted
// apart. It returns nil when a truth is missing ("" or truth nil).
func Accuracy(preds []Prediction, truth []string, classes []string) *Score {
	if len(truth) != len(preds) {
		return nil
	}
	known := map[string]bool{}
	for _, c := range classes {
		known[c] = true
	}
	var s Score
	for i, p := range preds {
		switch {
		case truth[i] == "":
			return nil
		case !known[truth[i]]:
			s.Unknown++
			if p.Unknown {
				s.UnknownRejected++
			}
		default:
			s.Evaluated++
			if p.Unknown {
				s.Rejected++
			}
			if p.Top[0].Name == truth[i] {
				s.Correct++
			}
		}
	}
	if s.Evaluated > 0 {
		s.Accuracy = float64(s.Correct) / float64(s.Evaluated)
	}
	return &s
}
