package watch

import (
	"context"

	"github.com/flycl/flycl/app/answer"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/reject"
	"github.com/flycl/flycl/vision/extract"
	"github.com/flycl/flycl/vision/imageio"
)

// Prediction is a frame's classification.
type Prediction struct {
	Top []flycl.Ranked `json:"top"`
	// Answer is the top class's name, or UnknownAnswer when the model's
	// rejection says the frame shows none of its classes or its top class
	// is reserved (answer.IsReserved: the empty scene, "none of these"); Unknown
	// is then true.
	Answer  string `json:"answer"`
	Unknown bool   `json:"unknown"`
	// Probability is the calibrated probability of the top class (nil for
	// a model without a fitted temperature).
	Probability *float64 `json:"probability,omitempty"`
	// ModelVersion is the version of the model that answered (absent
	// from a classifier that does not tell).
	ModelVersion uint64 `json:"model_version,omitempty"`
}

// UnknownAnswer is the answer for a frame the model's rejection rejects
// (answer.UnknownAnswer).
const UnknownAnswer = answer.UnknownAnswer

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
	// (*extract.Extractor, made by intake.ResolveExtractor).
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
	p, _, err := c.ClassifyFeatures(ctx, img)
	return p, err
}
