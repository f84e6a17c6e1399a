package watch

import (
	"context"
	"fmt"

	"github.com/flycl/flycl/app/answer"

	"github.com/flycl/flycl/vision/imageio"
)

// FeatureClassifier is a Classifier that also returns the feature vector
// it scored: what a labelling inbox keeps, to learn it later without the
// backbone.
type FeatureClassifier interface {
	Classifier
	ClassifyFeatures(ctx context.Context, img *imageio.RGB) (Prediction, []float32, error)
}

// ClassifyFeatures classifies img and returns its feature vector too.
func (c *ModelClassifier) ClassifyFeatures(ctx context.Context, img *imageio.RGB) (Prediction, []float32, error) {
	x, err := c.Extractor.Features(ctx, []*imageio.RGB{img})
	if err != nil {
		return Prediction{}, nil, err
	}
	if len(x) != c.Predictor.InputDim() {
		return Prediction{}, nil, fmt.Errorf("watch: the extractor gave %d features, the model takes %d", len(x), c.Predictor.InputDim())
	}
	scores, cos, err := c.Predictor.ScoresCosines(ctx, x)
	if err != nil {
		return Prediction{}, nil, err
	}
	top := c.Top
	if top <= 0 {
		top = 5
	}
	r := c.Predictor.Rank(scores, top)
	if len(r) != 1 || len(r[0]) == 0 {
		return Prediction{}, nil, fmt.Errorf("watch: the model has no classes")
	}
	d := answer.Decide(r[0][0].Name, c.Rejection, scores, cos[0])
	p := Prediction{Top: r[0], Answer: d.Answer, Unknown: d.Unknown, Probability: d.Probability, ModelVersion: c.Predictor.Version()}
	return p, x, nil
}
