package extract

import (
	"context"
	"fmt"

	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/imageio"
	"github.com/flycl/flycl/vision/transform"
)

// sessionOptions tune a session.
type sessionOptions struct {
	BatchSize int // images per inference call (default 32)
	Workers   int // decoding and preprocessing goroutines per call (0: one per CPU)
	Depth     int // batch buffers in flight between decoding and inference (default and minimum 2)
	// ORT are the ONNX Runtime session's options (threads, spinning).
	ORT backbone.SessionOptions
}

// session is one output of a backbone compiled on ONNX Runtime, with the
// preset that prepares its images: the extraction Run does for a data set
// (into its cache) and a server does for the images of a request. Images
// are decoded and preprocessed on a pool of workers into a bounded ring of
// batch buffers, continuously across batch boundaries, while inference
// runs the batches in order. Its methods are safe for concurrent use.
type session struct {
	model  *backbone.Model
	sess   *backbone.Session
	output int
	preset transform.Preset
	o      sessionOptions
}

// newSession compiles m for output (an index into m.Outputs) and the
// images preset prepares.
func newSession(m *backbone.Model, output int, preset transform.Preset, o sessionOptions) (*session, error) {
	if output < 0 || output >= len(m.Outputs) {
		return nil, fmt.Errorf("extract: %s has no output %d", m.Name, output)
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 32
	}
	s, err := m.NewSessionWith(o.ORT)
	if err != nil {
		return nil, err
	}
	return &session{model: m, sess: s, output: output, preset: preset, o: o}, nil
}

// Close releases the ONNX Runtime session.
func (s *session) Close() error { return s.sess.Close() }

// Dim returns the feature dimension.
func (s *session) Dim() int { return s.model.Dims[s.output] }

// Model returns the backbone.
func (s *session) Model() *backbone.Model { return s.model }

// Extract writes the features of images lo..hi of data to out, a
// (hi-lo)×Dim() row-major slice, calling progress (when not nil) after
// every batch with the index in data up to which images are done. On an
// error (or ctx cancelled) out holds the batches done so far.
func (s *session) Extract(ctx context.Context, data dataset.Dataset, lo, hi int, out []float32, progress func(done int)) error {
	d := s.Dim()
	if lo < 0 || hi < lo || hi > data.Len() || len(out) != (hi-lo)*d {
		return fmt.Errorf("extract: images [%d, %d) of %d into %d values (d=%d)", lo, hi, data.Len(), len(out), d)
	}
	if lo == hi {
		return nil
	}
	p := newPipeline(ctx, data, s.preset, lo, hi, s.o.BatchSize, s.o.Workers, s.o.Depth)
	defer p.close()
	done := lo
	for {
		bt, err := p.next(ctx)
		if err != nil {
			return err
		}
		if bt == nil {
			break
		}
		res, err := s.sess.Run(bt.x, bt.n)
		if err != nil {
			return fmt.Errorf("extract features: %w", err)
		}
		p.release(bt)
		copy(out[(bt.lo-lo)*d:(bt.lo-lo+bt.n)*d], res[s.output])
		done = bt.lo + bt.n
		if progress != nil {
			progress(done)
		}
	}
	switch {
	case done == hi:
		return nil // complete, even if ctx is cancelled now
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return fmt.Errorf("extract: images [%d, %d): stopped at %d", lo, hi, done)
}

// Images returns the len(imgs)×Dim() features of decoded images.
func (s *session) Images(ctx context.Context, imgs []*imageio.RGB) ([]float32, error) {
	out := make([]float32, len(imgs)*s.Dim())
	if err := s.Extract(ctx, decoded(imgs), 0, len(imgs), out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// decoded is a data set of images decoded already.
type decoded []*imageio.RGB

func (d decoded) Len() int                          { return len(d) }
func (d decoded) Label(int) int                     { return 0 }
func (d decoded) Classes() []string                 { return nil }
func (d decoded) Path(i int) string                 { return fmt.Sprintf("image %d", i) }
func (d decoded) Image(i int) (*imageio.RGB, error) { return d[i], nil }
