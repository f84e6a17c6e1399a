package export

import (
	"context"
	"fmt"

	"github.com/flycl/flycl/app/intake"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/extract"
)

// FileOptions choose the graph BuildFile makes of a model file (the
// options of flycl export, whose flags its errors name).
type FileOptions struct {
	// Name is the model file, for errors.
	Name string
	// From is the graph's input: "images" (through the model's backbone)
	// or "features"; "": images when the model has a backbone.
	From string
	// Precision is the backbone precision expected ("": the model's; see
	// CheckPrecision), Backbone another location of the model's backbone
	// weights ("": the one its file records), Open opens a backbone spec.
	Precision, Backbone string
	Open                func(extract.BackboneSpec) (*backbone.Model, error)
	// Projection is how W is applied (default Dense).
	Projection Projection
}

// BuildFile builds the graph of model file f (Build): from images through
// the backbone its pipeline records, in the precision it learned with
// (intake.ResolveExtractor: the model's pipeline fixes the backbone), or
// from feature vectors.
func BuildFile(ctx context.Context, f *modelfile.File, o FileOptions) (*Model, error) {
	from := o.From
	if from == "" {
		from = "features"
		if f.Pipeline != nil {
			from = "images"
		}
	}
	opt := Options{Projection: o.Projection}
	switch from {
	case "features":
		if o.Precision != "" || o.Backbone != "" {
			return nil, fmt.Errorf("--precision and --backbone apply to a graph from images, not --from features")
		}
	case "images":
		if f.Pipeline == nil {
			return nil, fmt.Errorf("%s learned from feature vectors without a backbone: export it with --from features", o.Name)
		}
		if err := CheckPrecision(f.Pipeline, o.Precision); err != nil {
			return nil, fmt.Errorf("--precision: %w", err)
		}
		var err error
		if opt.Extractor, err = intake.ResolveExtractor(ctx, intake.ExtractorOptions{Spec: o.Backbone, Model: f.Pipeline, Trained: true, Open: o.Open}); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("--from %q: want images or features", from)
	}
	return Build(f.Snapshot, opt)
}
