package watch

import (
	"context"
	"fmt"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/extract"
	"github.com/flycl/flycl/imageio"
	"github.com/flycl/flycl/reject"
)

// Prediction is a frame's classification.
type Prediction struct {
	Top []flycl.Ranked `json:"top"`
	// Answer is the top class's name, or UnknownAnswer when the model's
	// rejection says the frame shows none of its classes.
	Answer  string `json:"answer"`
	Unknown bool   `json:"unknown"`
	// Probability is the calibrated probability of the top class (nil for
	// a model without a fitted temperature).
	Probability *float64 `json:"probability,omitempty"`
}

// UnknownAnswer is the answer for a frame the model's rejection rejects.
const UnknownAnswer = "unknown"

// Classifier classifies one frame. Run calls it from one goroutine.
type Classifier interface {
	Classify(ctx context.Context, img *imageio.RGB) (Prediction, error)
}

// ModelClassifier classifies frames as flycl predict classifies images:
// features from the model's backbone and transform, the model's scores,
// its top classes and its rejection.
type ModelClassifier struct {
	// Extractor turns frames into feature vectors (len(imgs) × the
	// model's input dimension): the model's backbone and transform
	// (*extract.Extractor, made by deploy.ResolveExtractor).
	Extractor extract.Interface
	Predictor *flycl.Predictor
	// Rejection answers "unknown" (zero: never); the model's own is
	// Predictor.Rejection().
	Rejection reject.Rule
	// Top is how many classes a prediction lists (≤ 0: 5).
	Top int
}

// Classify implements Classifier.
func (c *ModelClassifier) Classify(ctx context.Context, img *imageio.RGB) (Prediction, error) {
	x, err := c.Extractor.Features(ctx, []*imageio.RGB{img})
	if err != nil {
		return Prediction{}, err
	}
	if len(x) != c.Predictor.InputDim() {
		return Prediction{}, fmt.Errorf("watch: the extractor gave %d features, the model takes %d", len(x), c.Predictor.InputDim())
	}
	scores, cos, err := c.Predictor.ScoresCosines(ctx, x)
	if err != nil {
		return Prediction{}, err
	}
	top := c.Top
	if top <= 0 {
		top = 5
	}
	r := c.Predictor.Rank(scores, top)
	if len(r) != 1 || len(r[0]) == 0 {
		return Prediction{}, fmt.Errorf("watch: the model has no classes")
	}
	p := Prediction{Top: r[0], Answer: r[0][0].Name, Unknown: c.Rejection.Reject(scores, cos[0])}
	if p.Unknown {
		p.Answer = UnknownAnswer
	}
	if pr, ok := c.Rejection.Probability(scores); ok {
		p.Probability = &pr
	}
	return p, nil
}
