package server

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/flycl/flycl/backbone"
	"github.com/flycl/flycl/imageio"
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

// BackboneExtractor runs a backbone on ONNX Runtime with its own
// preprocessing preset.
type BackboneExtractor struct {
	model *backbone.Model
	sess  *backbone.Session
	batch int
}

// NewBackboneExtractor compiles m with the given number of ONNX Runtime
// threads (0: one per CPU).
func NewBackboneExtractor(m *backbone.Model, threads int) (*BackboneExtractor, error) {
	s, err := m.NewSession(threads)
	if err != nil {
		return nil, err
	}
	return &BackboneExtractor{model: m, sess: s, batch: 16}, nil
}

// Close releases the ONNX Runtime session.
func (e *BackboneExtractor) Close() error { return e.sess.Close() }

// Dim returns the feature dimension.
func (e *BackboneExtractor) Dim() int { return e.model.Dim() }

// Name returns the backbone's name.
func (e *BackboneExtractor) Name() string { return e.model.Name }

// Features preprocesses the images (in parallel) and runs the backbone in
// batches.
func (e *BackboneExtractor) Features(ctx context.Context, imgs []*imageio.RGB) ([]float32, error) {
	per := 3 * e.model.Size * e.model.Size
	d := e.model.Dim()
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
				e.model.Preset.Tensor(imgs[i], x[(i-lo)*per:(i-lo+1)*per])
				<-sem
			}()
		}
		wg.Wait()
		res, err := e.sess.Run(x, hi-lo)
		if err != nil {
			return nil, fmt.Errorf("extract features: %w", err)
		}
		copy(out[lo*d:hi*d], res[0])
	}
	return out, nil
}
