package watch

import (
	"context"
	"fmt"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/intake"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/extract"
)

// ModelOptions choose how NewModelClassifier opens a model's backbone.
type ModelOptions struct {
	// Name is the model file and What what is classified ("frames"),
	// for errors.
	Name, What string
	// Backbone is another location of the model's backbone weights ("":
	// the one its pipeline records); Open opens a backbone spec.
	Backbone string
	Open     func(extract.BackboneSpec) (*backbone.Model, error)
	// Unknown is the rejection (ParseRejection: auto, off, a threshold
	// or keep:SHARE) and Pool the model's calibration pool that a share
	// is taken from.
	Unknown string
	Pool    []float32
	// Threads are the ONNX Runtime threads (0: one per CPU).
	Threads int
}

// NewModelClassifier returns the classifier of a model's predictor p
// whose file records pipeline mp: the backbone mp names (or o.Backbone,
// another copy of the same weights), its output, transform and precision
// (intake.ResolveExtractor), and the rejection o.Unknown asks for. It
// also returns the extractor, for its preset; the caller closes it.
func NewModelClassifier(ctx context.Context, p *flycl.Predictor, mp *modelfile.Pipeline, o ModelOptions) (*ModelClassifier, *extract.Extractor, error) {
	if p.Classes().Len() == 0 {
		return nil, nil, fmt.Errorf("%s has no classes yet: teach it with flycl learn", o.Name)
	}
	if mp == nil {
		return nil, nil, fmt.Errorf("%s learned from feature vectors: it has no backbone to classify %s with", o.Name, o.What)
	}
	rej, err := ParseRejection(o.Unknown, p.Rejection(), o.Pool)
	if err != nil {
		return nil, nil, fmt.Errorf("--unknown: %w", err)
	}
	var openErr error // the caller's, as it gives it
	open := func(s extract.BackboneSpec) (*backbone.Model, error) {
		m, err := o.Open(s)
		openErr = err
		return m, err
	}
	ex, err := intake.ResolveExtractor(ctx, intake.ExtractorOptions{Spec: o.Backbone, Open: open, Model: mp, Trained: true})
	if openErr != nil {
		return nil, nil, openErr
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", o.Name, err)
	}
	ex.Threads, ex.Spin = o.Threads, true
	if err := ex.Open(); err != nil {
		return nil, nil, err
	}
	return &ModelClassifier{Extractor: ex, Predictor: p, Rejection: rej}, ex, nil
}
