package server

import (
	"context"

	"github.com/flycl/flycl/backbone"
	"github.com/flycl/flycl/extract"
	"github.com/flycl/flycl/imageio"
	"github.com/flycl/flycl/modelfile"
	"github.com/flycl/flycl/transform"
)

// Extractor turns decoded images into feature vectors. Features must be
// safe for concurrent use (the server bounds how many calls run at once).
type Extractor interface {
	// Dim is the feature dimension.
	Dim() int
	// Name identifies the backbone (for information).
	Name() string
	// Features returns the len(imgs)×Dim() features.
	Features(ctx context.Context, imgs []*imageio.RGB) ([]float32, error)
}

// BackboneExtractor runs a backbone on ONNX Runtime: one of its outputs
// of images preprocessed by a transform preset, through an
// extract.Session (the extraction flycl extract and learn run: images
// preprocessed in parallel, overlapped with inference in batches).
type BackboneExtractor struct {
	sess *extract.Session
}

// NewBackboneExtractor compiles m with the given number of ONNX Runtime
// threads (0: one per CPU), for its "features" output and its own preset.
func NewBackboneExtractor(m *backbone.Model, threads int) (*BackboneExtractor, error) {
	return NewPipelineExtractor(m, "features", m.Preset, threads)
}

// NewPipelineExtractor compiles m for the named output and preset: those
// a model file's pipeline records (deploy.ForModel resolves them), so that
// a model learned with another preset or output gets the same features.
func NewPipelineExtractor(m *backbone.Model, output string, preset transform.Preset, threads int) (*BackboneExtractor, error) {
	return NewPipelineExtractorWith(m, output, preset, backbone.SessionOptions{Threads: threads})
}

// NewPipelineExtractorWith is NewPipelineExtractor with every ONNX Runtime
// session option (NoSpin: idle threads sleep instead of spinning, which
// leaves the CPU to concurrent requests at some latency of a run alone).
func NewPipelineExtractorWith(m *backbone.Model, output string, preset transform.Preset, o backbone.SessionOptions) (*BackboneExtractor, error) {
	out, err := m.OutputIndex(output)
	if err != nil {
		return nil, err
	}
	s, err := extract.NewSession(m, out, preset, extract.SessionOptions{BatchSize: 16, ORT: o})
	if err != nil {
		return nil, err
	}
	return &BackboneExtractor{sess: s}, nil
}

// Close releases the ONNX Runtime session.
func (e *BackboneExtractor) Close() error { return e.sess.Close() }

// Dim returns the feature dimension.
func (e *BackboneExtractor) Dim() int { return e.sess.Dim() }

// Name returns the backbone's name.
func (e *BackboneExtractor) Name() string { return e.sess.Model().Name }

// Features preprocesses the images (in parallel) and runs the backbone in
// batches (extract.Session.Images).
func (e *BackboneExtractor) Features(ctx context.Context, imgs []*imageio.RGB) ([]float32, error) {
	return e.sess.Images(ctx, imgs)
}

// Calibrator is an Extractor that is not ready until it is calibrated on
// training images: an int8 backbone for a new model, calibrated on the
// images of the server's first learn, as flycl learn --precision int8
// calibrates on the data it learns. Until then the server refuses
// predicts of images and learns of feature vectors (the model has learned
// nothing, and features given directly could not be tied to the
// calibration); the first learn of images calibrates it, on the learner
// goroutine, and the backend's model takes the pipeline Calibrate
// returns (the Backend must have a SetPipeline(*modelfile.Pipeline) error
// method, as FileBackend has). A learn with an image that does not decode
// is refused before calibrating; a learn that fails later (its solve or
// save) keeps the calibration, which the model file records at the next
// learn that succeeds (a restart before then calibrates afresh).
type Calibrator interface {
	Extractor
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

// errUncalibrated refuses what an uncalibrated Calibrator cannot do yet.
var errUncalibrated = errorf(409, "this server's int8 backbone is calibrated on the images of the first learn: learn images first")

// calibrating returns the server's Calibrator when it still waits for its
// calibration.
func (s *Server) calibrating() (Calibrator, bool) {
	c, ok := s.cfg.Extractor.(Calibrator)
	return c, ok && !c.Calibrated()
}
