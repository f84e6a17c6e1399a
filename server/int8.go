package server

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/flycl/flycl/backbone"
	"github.com/flycl/flycl/deploy"
	"github.com/flycl/flycl/imageio"
	"github.com/flycl/flycl/modelfile"
)

// Int8Calibrator is the Extractor of a new model served with an int8
// backbone: the int8 graph of an fp32 extractor's backbone, calibrated
// (deploy.Extractor.Int8) on the images of the server's first learn. It
// is a Calibrator: until then the server refuses what needs features.
type Int8Calibrator struct {
	fp32 *deploy.Extractor // backbone (fp32), spec, output and preset
	o    deploy.CalibOptions
	so   backbone.SessionOptions
	ex   atomic.Pointer[BackboneExtractor] // nil until calibrated
}

// NewInt8Calibrator returns the calibrator of fp32's int8 graph: o chooses
// the calibration (its N images spread evenly over the learn's), so the
// ONNX Runtime session of the calibrated graph.
func NewInt8Calibrator(fp32 *deploy.Extractor, o deploy.CalibOptions, so backbone.SessionOptions) *Int8Calibrator {
	return &Int8Calibrator{fp32: fp32, o: o, so: so}
}

// Dim returns the feature dimension.
func (c *Int8Calibrator) Dim() int {
	i, _ := c.fp32.Backbone.OutputIndex(c.fp32.Output)
	return c.fp32.Backbone.Dims[i]
}

// Name returns the backbone's name.
func (c *Int8Calibrator) Name() string { return c.fp32.Backbone.Name + " (int8)" }

// Calibrated reports whether Calibrate has succeeded.
func (c *Int8Calibrator) Calibrated() bool { return c.ex.Load() != nil }

// Features runs the calibrated int8 graph; before Calibrate it fails.
func (c *Int8Calibrator) Features(ctx context.Context, imgs []*imageio.RGB) ([]float32, error) {
	ex := c.ex.Load()
	if ex == nil {
		return nil, fmt.Errorf("server: the int8 backbone is not calibrated yet")
	}
	return ex.Features(ctx, imgs)
}

// Calibrate builds the int8 graph from the n images of a learn and
// returns the pipeline the model records.
func (c *Int8Calibrator) Calibrate(ctx context.Context, n int, image func(int) (*imageio.RGB, error)) (*modelfile.Pipeline, error) {
	q, err := c.fp32.Int8(ctx, imageList{n, image}, c.o)
	if err != nil {
		return nil, err
	}
	ex, err := NewPipelineExtractorWith(q.Backbone, q.Output, q.Preset, c.so)
	if err != nil {
		return nil, err
	}
	c.ex.Store(ex)
	return q.Pipeline(), nil
}

// Close releases the int8 session.
func (c *Int8Calibrator) Close() error {
	if ex := c.ex.Load(); ex != nil {
		return ex.Close()
	}
	return nil
}

// imageList is a learn's images as a data set (for calibration).
type imageList struct {
	n     int
	image func(int) (*imageio.RGB, error)
}

func (l imageList) Len() int                          { return l.n }
func (l imageList) Label(int) int                     { return 0 }
func (l imageList) Classes() []string                 { return nil }
func (l imageList) Path(i int) string                 { return fmt.Sprintf("image %d of the learn", i) }
func (l imageList) Image(i int) (*imageio.RGB, error) { return l.image(i) }
