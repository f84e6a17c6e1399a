package server

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/flycl/flycl/backbone"
	"github.com/flycl/flycl/imageio"
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
// of images preprocessed by a transform preset.
type BackboneExtractor struct {
	model  *backbone.Model
	sess   *backbone.Session
	out    int // output index
	preset transform.Preset
	batch  int
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
	out, err := m.OutputIndex(output)
	if err != nil {
		return nil, err
	}
	s, err := m.NewSession(threads)
	if err != nil {
		return nil, err
	}
	return &BackboneExtractor{model: m, sess: s, out: out, preset: preset, batch: 16}, nil
}

// Close releases the ONNX Runtime session.
func (e *BackboneExtractor) Close() error { return e.sess.Close() }

// Dim returns the feature dimension.
func (e *BackboneExtractor) Dim() int { return e.model.Dims[e.out] }

// Name returns the backbone's name.
func (e *BackboneExtractor) Name() string { return e.model.Name }

// Features preprocesses the images (in parallel) and runs the backbone in
// batches.
func (e *BackboneExtractor) Features(ctx context.Context, imgs []*imageio.RGB) ([]float32, error) {
	per := 3 * e.model.Size * e.model.Size
	d := e.Dim()
	out := make([]float32, len(imgs)*d)
	for lo := 0; lo < len(imgs); lo += e.batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(len(imgs), lo+e.batch)
		x := make([]float32, (hi-lo)*per)
		var wg sync.WaitGroup
		sem := make(chan struct{}, runtime.GOMAXPROCS(0))
		for i := lo; i < hi; i++ {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				e.preset.Tensor(imgs[i], x[(i-lo)*per:(i-lo+1)*per])
				<-sem
			}()
		}
		wg.Wait()
		res, err := e.sess.Run(x, hi-lo)
		if err != nil {
			return nil, fmt.Errorf("extract features: %w", err)
		}
		copy(out[lo*d:hi*d], res[e.out])
	}
	return out, nil
}
