package intake

import (
	"context"
	"errors"
	"fmt"

	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/extract"
	"github.com/flycl/flycl/vision/imageio"
	"github.com/flycl/flycl/vision/transform"
)

// ErrPrecision is wrapped by CheckPrecision: a backbone precision other
// than the one the model learned with.
var ErrPrecision = errors.New("intake: precision differs from the model's")

// ErrNoPipeline is wrapped by ResolveExtractor when a model that learned
// from feature vectors without a backbone is given images.
var ErrNoPipeline = errors.New("intake: the model learned from feature vectors without a backbone")

// ErrNoCalibration is wrapped by ResolveExtractor when an int8 backbone
// for a new model has no images to be calibrated on.
var ErrNoCalibration = errors.New("intake: an int8 backbone for a new model needs images to calibrate on")

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

// ExtractorOptions are what a model command (or a server) asks of the
// pipeline that turns its images into features; ResolveExtractor applies
// the deployment rules to them.
type ExtractorOptions struct {
	// Spec is the backbone asked for (--backbone): "" takes the model's
	// (Model.Backbone), else Default.
	Spec, Default string
	// Open opens a backbone spec, parsed once (the caller resolves
	// weights folders: extract.BackboneSpec.Open).
	Open func(spec extract.BackboneSpec) (*backbone.Model, error)
	// Model is the model file's pipeline (nil: it records none), and
	// Trained whether it fixes the backbone (the model has learned
	// through it): a trained model's pipeline fixes the backbone's
	// weights, output, transform and precision, and a trained model
	// without one takes no images.
	Model   *modelfile.Pipeline
	Trained bool
	// Output ("": features) and Preset (nil: the backbone's) for a model
	// that has not learned yet; a trained model's Preset must be its own.
	Output string
	Preset *transform.Preset
	// Precision asked for ("": the model's, fp32 for a new model). A
	// trained model's must agree with its own (CheckPrecision); int8 for a
	// new model calibrates the backbone with Calib on CalibImages or,
	// with CalibrateOnLearn, on the images of its first learn.
	Precision backbone.Precision
	Calib     extract.CalibOptions
	// CalibImages opens the images an int8 backbone for a new model is
	// calibrated on (the data being learned); nil: none.
	CalibImages func() (dataset.Dataset, error)
	// CalibrateOnLearn: without CalibImages, an int8 backbone for a new
	// model is calibrated on the images of its first learn
	// (extract.Extractor.Int8Later: a server's).
	CalibrateOnLearn bool
	// CalibGiven says Calib was asked for explicitly: refused
	// (ErrCalibUnused) when the backbone resolved is not int8, since
	// nothing would be calibrated with it. (An int8 model's pipeline
	// fixes its calibration; options that agree in kind are accepted.)
	CalibGiven bool
	// Decoder decodes images (the zero value: PIL's pixel limit).
	Decoder imageio.Decoder
}

// ErrCalibUnused is wrapped by ResolveExtractor when calibration options
// are given for a backbone that is not int8.
var ErrCalibUnused = errors.New("intake: calibration options apply to an int8 backbone")

// ResolveExtractor chooses the extractor of a model command or server,
// the one place these rules are written: the backbone asked for, else the
// model's, else the default; for a trained model the model's pipeline
// (extract.ForModel: the same weights, output, transform and precision,
// an int8 graph rebuilt from its calibration; a mismatch names the
// field); for a new model the options' output, preset and precision, an
// int8 backbone calibrated on CalibImages, or on the first learn's images
// with CalibrateOnLearn. The caller sets the extractor's cache, batch,
// threads and progress.
func ResolveExtractor(ctx context.Context, o ExtractorOptions) (*extract.Extractor, error) {
	e, err := resolveExtractor(ctx, o)
	if err != nil {
		return nil, err
	}
	if o.CalibGiven && e.Calibrated() {
		if prec := PipelinePrecision(e.Pipeline()); prec != backbone.INT8 {
			return nil, fmt.Errorf("%w: the model's features are %s", ErrCalibUnused, prec)
		}
	}
	return e, nil
}

func resolveExtractor(ctx context.Context, o ExtractorOptions) (*extract.Extractor, error) {
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
		return nil, fmt.Errorf("intake: ExtractorOptions.Open is nil")
	}
	parsed, err := extract.ParseBackbone(spec)
	if err != nil {
		return nil, err
	}
	bm, err := o.Open(parsed)
	if err != nil {
		return nil, err
	}
	var e *extract.Extractor
	if o.Model != nil && o.Trained {
		if err := CheckPrecision(o.Model, o.Precision); err != nil {
			return nil, err
		}
		if e, err = extract.ForModel(o.Model, bm, spec); err != nil {
			return nil, fmt.Errorf("backbone %s: %w", spec, err)
		}
		if o.Preset != nil && *o.Preset != e.Preset {
			return nil, fmt.Errorf("intake: preset %s differs from the model's transform %+v", o.Preset.Name, o.Model.Transform)
		}
		e.Decoder = o.Decoder
		return e, nil
	}
	if e, err = extract.NewExtractor(bm, spec, o.Output, o.Preset); err != nil {
		return nil, err
	}
	e.Decoder = o.Decoder
	switch o.Precision {
	case "", backbone.FP32:
		return e, nil
	case backbone.INT8:
		if o.CalibImages == nil {
			if o.CalibrateOnLearn {
				return e.Int8Later(o.Calib), nil
			}
			return nil, ErrNoCalibration
		}
		images, err := o.CalibImages()
		if err != nil {
			return nil, err
		}
		return e.Int8(ctx, images, o.Calib)
	}
	return nil, fmt.Errorf("intake: precision %q: want fp32 or int8", o.Precision)
}
