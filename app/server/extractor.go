package server

import (
	"context"
	"errors"

	"github.com/flycl/flycl/app/intake"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/extract"
	"github.com/flycl/flycl/vision/imageio"
)

// calibrator is an extractor that is not ready until it is calibrated on
// training images (*extract.Extractor is one): an int8 backbone for a new
// model (extract.Extractor.Int8Later), calibrated on the images of the
// server's first learn, as flycl learn --precision int8 calibrates on the
// data it learns. Until then the server refuses predicts of images and
// learns of feature vectors (the model has learned nothing, and features
// given directly could not be tied to the calibration); the first learn
// of images calibrates it, on the learner goroutine, and the backend's
// model takes the pipeline Calibrate returns (the Backend must have a
// SetPipeline(*modelfile.Pipeline) error method, as FileBackend has). A
// learn with an image that does not decode is refused before calibrating;
// a learn that fails later (its solve or save) keeps the calibration,
// which the model file records at the next learn that succeeds (a restart
// before then calibrates afresh).
type calibrator interface {
	// Calibrated reports whether Features may be called (it becomes true
	// once, when Calibrate succeeds, and stays true).
	Calibrated() bool
	// Calibrate prepares the extractor from n training images (image(i)
	// decodes image i) and returns the pipeline the model records. The
	// server calls it from one goroutine only.
	Calibrate(ctx context.Context, n int, image func(i int) (*imageio.RGB, error)) (*modelfile.Pipeline, error)
}

// pipelineSetter is a Backend whose model can take the calibrated
// pipeline (FileBackend).
type pipelineSetter interface {
	SetPipeline(p *modelfile.Pipeline) error
}

// errUncalibrated refuses what an uncalibrated extractor cannot do yet.
var errUncalibrated = errorf(409, "this server's int8 backbone is calibrated on the images of the first learn: learn images first")

// calibrating returns the server's extractor as a calibrator when it
// still waits for its calibration.
func (s *Server) calibrating() (calibrator, bool) {
	c, ok := s.cfg.Extractor.(calibrator)
	return c, ok && !c.Calibrated()
}

// PipelineBackend is a Backend whose model file records the pipeline its
// features come from (FileBackend, ReadOnlyBackend).
type PipelineBackend interface {
	Backend
	// Pipeline is the model's pipeline (nil: it records none).
	Pipeline() *modelfile.Pipeline
	// SetPipeline declares the backbone of a model that records none, and
	// checks it against the one it records.
	SetPipeline(p *modelfile.Pipeline) error
}

// ErrInt8Learned is returned by ResolveExtractor for an int8 backbone
// asked for a model that learned from feature vectors: int8 is calibrated
// on the images of a new model's first learn.
var ErrInt8Learned = errors.New("server: the model learned from feature vectors without a backbone; int8 is for a new model")

// ResolveExtractor resolves the extractor of the model be serves with the
// rules of intake.ResolveExtractor (which o's Model and Trained are set
// for): the model file's pipeline fixes the backbone's weights, output,
// transform and precision (an int8 graph rebuilt from its calibration);
// a model without one takes o's backbone, whose pipeline it then records
// (SetPipeline); an int8 backbone for a new model waits to be calibrated
// on the images of the first learn (ErrInt8Learned for a model that has
// learned from feature vectors). An error of SetPipeline is a
// *PipelineError. The caller sets the extractor's batch,
// threads and spinning, opens it (Open) and closes it after the server.
func ResolveExtractor(ctx context.Context, be PipelineBackend, o intake.ExtractorOptions) (*extract.Extractor, error) {
	p := be.Pipeline()
	o.Model, o.Trained = p, p != nil
	o.CalibImages, o.CalibrateOnLearn = nil, true
	if p == nil && o.Precision == backbone.INT8 && be.Current().Version() > 0 {
		return nil, ErrInt8Learned
	}
	e, err := intake.ResolveExtractor(ctx, o)
	if err != nil {
		return nil, err
	}
	if e.Calibrated() { // else the first learn's calibration sets it
		if err := be.SetPipeline(e.Pipeline()); err != nil {
			return nil, &PipelineError{err}
		}
	}
	return e, nil
}

// PipelineError is the backend's refusal of the extractor's pipeline
// (SetPipeline), returned by ResolveExtractor: its message is the
// backend's, which names the model file.
type PipelineError struct{ Err error }

func (e *PipelineError) Error() string { return e.Err.Error() }
func (e *PipelineError) Unwrap() error { return e.Err }
