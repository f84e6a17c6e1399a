package answer

import (
	"context"
	"fmt"
	"strconv"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/reject"
)

// An Answer is the Prediction of one named input, with its true class
// when known: a row of flycl predict's output.
type Answer struct {
	Input string `json:"input"`
	Truth string `json:"truth,omitempty"`
	Prediction
}

// Inputs are the samples PredictInputs answers.
type Inputs struct {
	X      []float32 // N×D, row-major
	D      int
	Names  []string // each input's name (a path); nil: its index
	Truth  []string // each input's true class; nil: unknown
	Source string   // names the inputs in errors
}

// Answers are PredictInputs' result: one Answer per input, and the
// accuracy when every input has a true class (Accuracy; nil otherwise).
type Answers struct {
	Answers  []Answer
	Accuracy *Score
}

// PredictInputs answers every input with p (Predict: its top classes, at
// most top, and "unknown" where rej rejects it), names each answer and
// gives its truth, and scores them (Accuracy). Features of another
// dimension than the model's are an input error (flycl.IsInput) naming
// in.Source.
func PredictInputs(ctx context.Context, p *flycl.Predictor, rej reject.Rule, in Inputs, top int) (*Answers, error) {
	if in.D != p.InputDim() {
		return nil, flycl.Input(fmt.Errorf("%s: the inputs have %d-dimensional features, the model d=%d", in.Source, in.D, p.InputDim()))
	}
	preds, err := Predict(ctx, p, rej, in.X, top)
	if err != nil {
		return nil, err
	}
	out := &Answers{Answers: make([]Answer, len(preds))}
	for i, a := range preds {
		out.Answers[i] = Answer{Input: strconv.Itoa(i), Prediction: a}
		if in.Names != nil {
			out.Answers[i].Input = in.Names[i]
		}
		if in.Truth != nil {
			out.Answers[i].Truth = in.Truth[i]
		}
	}
	out.Accuracy = Accuracy(preds, in.Truth, p.Classes().Names())
	return out, nil
}
