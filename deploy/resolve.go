package deploy

import (
	"context"
	"errors"
	"fmt"

	"github.com/flycl/flycl/backbone"
	"github.com/flycl/flycl/dataset"
	"github.com/flycl/flycl/extract"
	"github.com/flycl/flycl/imageio"
	"github.com/flycl/flycl/modelfile"
	"github.com/flycl/flycl/transform"
)

// ErrPrecision is wrapped by CheckPrecision: a backbone precision other
// than the one the model learned with.
var ErrPrecision = errors.New("deploy: precision differs from the model's")

// ErrNoPipeline is wrapped by ResolveExtractor when a model that learned
// from feature vectors without a backbone is given images.
var ErrNoPipeline = errors.New("deploy: the model learned from feature vectors without a backbone")

// ErrNoCalibration is wrapped by ResolveExtractor when an int8 backbone
// for a new model has no images to be calibrated on.
var ErrNoCalibration = errors.New("deploy: an int8 backbone for a new model needs images to calibrate on")

// PipelinePrecision returns the backbone precision a model file's
// pipeline records: fp32 when it records none (or p is nil).
func PipelinePrecision(p *modelfile.Pipeline) backbone.Precision {
	if p == nil || p.Precision == "" {
		return backbone.FP32
	}
	return backbone.Precision(p.Precision)
}

// CheckPrecision applies the rule "the model's recorded precision wins;
// an explicit precision must agree": want "" asks nothing and passes;
// another precision than PipelinePrecision(p) is refused (ErrPrecision),
// since that backbone makes features the classifier was not learned from.
func CheckPrecision(p *modelfile.Pipeline, want backbone.Precision) error {
	if want == "" {
		return nil
	}
	if have := PipelinePrecision(p); want != have {
		return fmt.Errorf("%w: the model learned with %s features; the %s backbone makes other features, which its classifier was not learned from",
			ErrPrecision, have, want)
	}
	return nil
}

// CalibOptions choose how an fp32 backbone is calibrated into an int8
// one (see extract.Int8).
type CalibOptions struct {
	N       int // calibration images, spread evenly over the data (extract.CalibrationImages)
	Method  backbone.CalibMethod
	Threads int // preprocessing and ONNX Runtime threads (0: all CPUs)
}

// Int8 returns e with its backbone's int8 graph, calibrated on images
// (the training images of the model being made) with e's preset; an
// extractor already int8 is returned as it is. The result's Pipeline
// records the calibration, so that the same graph is rebuilt later
// without the images (AsPipeline).
func (e *Extractor) Int8(ctx context.Context, images dataset.Dataset, o CalibOptions) (*Extractor, error) {
	if e.Backbone.Precision == backbone.INT8 {
		return e, nil
	}
	q, err := extract.Int8(ctx, e.Backbone, dataset.WithDecoder(images, e.Decoder), e.Preset, o.Method, o.N, o.Threads)
	if err != nil {
		return nil, err
	}
	c := *e
	c.Backbone = q
	return &c, nil
}

// ExtractorOptions are what a model command asks of the pipeline that
// turns its images into features; ResolveExtractor applies the deployment
// rules to them.
type ExtractorOptions struct {
	// Spec is the backbone asked for: "" takes the model's (Model.Backbone),
	// else Default.
	Spec, Default string
	// Open opens a backbone spec, parsed once (the caller resolves
	// weights folders: extract.BackboneSpec.Open).
	Open func(spec extract.BackboneSpec) (*backbone.Model, error)
	// Model is the model file's pipeline (nil: it records none), and
	// Trained whether the model has learned anything: a trained model's
	// pipeline fixes the backbone's weights, output, transform and
	// precision, and a trained model without one takes no images.
	Model   *modelfile.Pipeline
	Trained bool
	// Output ("": features) and Preset (nil: the backbone's) for a model
	// that has not learned yet; a trained model's Preset must be its own.
	Output string
	Preset *transform.Preset
	// Precision asked for ("": the model's, fp32 for a new model). A
	// trained model's must agree with its own (CheckPrecision); int8 for a
	// new model calibrates the backbone on CalibImages with Calib.
	Precision backbone.Precision
	Calib     CalibOptions
	// CalibImages opens the images an int8 backbone for a new model is
	// calibrated on (the data being learned); nil: none.
	CalibImages func() (dataset.Dataset, error)
	// Decoder decodes images (the zero value: PIL's pixel limit).
	Decoder imageio.Decoder
}

// ResolveExtractor chooses the extractor of a model command: the backbone
// asked for, else the model's, else the default; for a trained model the
// model's pipeline (ForModel: the same weights, output, transform and
// precision, an int8 graph rebuilt from its calibration); for a new model
// the options' output, preset and precision, an int8 backbone calibrated
// on CalibImages. The caller sets the extractor's cache, batch, threads
// and progress.
func ResolveExtractor(ctx context.Context, o ExtractorOptions) (*Extractor, error) {
	spec := o.Spec
	if spec == "" && o.Model != nil {
		spec = o.Model.Backbone
	}
	if o.Model == nil && o.Trained {
		if spec == "" {
			spec = "a backbone"
		}
		return nil, fmt.Errorf("%w: it cannot tell whether %s makes the same features", ErrNoPipeline, spec)
	}
	if spec == "" {
		spec = o.Default
	}
	if o.Open == nil {
		return nil, fmt.Errorf("deploy: ExtractorOptions.Open is nil")
	}
	parsed, err := extract.ParseBackbone(spec)
	if err != nil {
		return nil, err
	}
	bm, err := o.Open(parsed)
	if err != nil {
		return nil, err
	}
	var e *Extractor
	if o.Model != nil && o.Trained {
		if err := CheckPrecision(o.Model, o.Precision); err != nil {
			return nil, err
		}
		if e, err = ForModel(o.Model, bm, spec); err != nil {
			return nil, fmt.Errorf("backbone %s: %w", spec, err)
		}
		if o.Preset != nil && *o.Preset != e.Preset {
			return nil, fmt.Errorf("deploy: preset %s differs from the model's transform %+v", o.Preset.Name, o.Model.Transform)
		}
		e.Decoder = o.Decoder
		return e, nil
	}
	if e, err = NewExtractor(bm, spec, o.Output, o.Preset); err != nil {
		return nil, err
	}
	e.Decoder = o.Decoder
	switch o.Precision {
	case "", backbone.FP32:
		return e, nil
	case backbone.INT8:
		if o.CalibImages == nil {
			return nil, ErrNoCalibration
		}
		images, err := o.CalibImages()
		if err != nil {
			return nil, err
		}
		return e.Int8(ctx, images, o.Calib)
	}
	return nil, fmt.Errorf("deploy: precision %q: want fp32 or int8", o.Precision)
}
