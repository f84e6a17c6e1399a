package extract

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/imageio"
	"github.com/flycl/flycl/vision/transform"
)

// Interface is what a server or a watcher needs of an Extractor: decoded
// images in, feature vectors out. *Extractor implements it; tests give
// stand-ins that need no ONNX Runtime. Features must be safe for
// concurrent use.
type Interface interface {
	// Dim is the feature dimension.
	Dim() int
	// Name identifies the backbone (for information).
	Name() string
	// Features returns the len(imgs)×Dim() features.
	Features(ctx context.Context, imgs []*imageio.RGB) ([]float32, error)
}

// ErrUncalibrated is returned by Features of an extractor that waits for
// its int8 calibration (Int8Later) before Calibrate.
var ErrUncalibrated = errors.New("extract: the int8 backbone is not calibrated yet")

// Extractor turns images into a model's features: a backbone, one of its
// outputs and a transform. It extracts data sets and files (Dataset,
// Files: through Run, cached and resumable) and decoded images (Features:
// through one ONNX Runtime session compiled at the first call or by
// Open, kept until Close). Make one with NewExtractor or ForModel; its
// exported fields may be set before its first use.
type Extractor struct {
	Backbone *backbone.Model
	Spec     string // what the backbone was opened from (recorded in the model file)
	Output   string // backbone output ("features")
	Preset   transform.Preset
	// Decoder decodes the images (the zero value: PIL's pixel limit).
	Decoder imageio.Decoder
	// CacheDir caches the features of data sets ("" disables it);
	// BatchSize (images per inference call, default 32), Threads (ONNX
	// Runtime threads, 0: all CPUs), Workers (decoding and preprocessing
	// goroutines, 0: one per CPU) and Spin (let ONNX Runtime's idle
	// threads spin) as in Job, also for Features and Subset; Progress
	// reports the extraction of a data set.
	CacheDir  string
	BatchSize int
	Threads   int
	Workers   int
	Spin      bool
	Progress  func(done, total int, rate float64)

	mu   sync.Mutex                // compiling sess, calibrating
	sess atomic.Pointer[session]   // Features' session, nil until compiled
	int8 *CalibOptions             // not nil: waits for Calibrate (Int8Later)
	cal  atomic.Pointer[Extractor] // the calibrated int8 extractor
}

// NewExtractor checks the output name ("": features) and returns an
// extractor with the backbone's own preset unless preset is given.
func NewExtractor(m *backbone.Model, spec, output string, preset *transform.Preset) (*Extractor, error) {
	if output == "" {
		output = "features"
	}
	if _, err := m.OutputIndex(output); err != nil {
		return nil, err
	}
	e := &Extractor{Backbone: m, Spec: spec, Output: output, Preset: m.Preset}
	if preset != nil {
		e.Preset = *preset
	}
	return e, nil
}

// ForModel returns the extractor of a model file's pipeline from the
// backbone m (opened by the caller from p.Backbone or a spec of its own):
// the model's output and transform, its precision (an int8 graph rebuilt
// from its calibration: AsPipeline); a backbone whose weights, output or
// dimension differ from the model's is refused (the error names the
// field: modelfile.Pipeline.Check).
func ForModel(p *modelfile.Pipeline, m *backbone.Model, spec string) (*Extractor, error) {
	if p == nil {
		return nil, fmt.Errorf("the model learned from feature vectors: it has no backbone to classify images with")
	}
	preset, err := PresetOf(p.Transform)
	if err != nil {
		return nil, fmt.Errorf("model transform: %w", err)
	}
	if m, err = AsPipeline(p, m); err != nil {
		return nil, err
	}
	e, err := NewExtractor(m, spec, p.Output, &preset)
	if err != nil {
		return nil, err
	}
	if err := p.Check(e.Pipeline()); err != nil {
		return nil, err
	}
	return e, nil
}

// AsPipeline returns m in the precision of a model file's pipeline: for
// "int8" the int8 graph rebuilt from the pipeline's calibration (no
// training data needed), else m itself.
func AsPipeline(p *modelfile.Pipeline, m *backbone.Model) (*backbone.Model, error) {
	if p == nil || p.Precision != string(backbone.INT8) || m.Precision == backbone.INT8 {
		return m, nil
	}
	var cal *backbone.Calibration
	if p.Calibration != "" {
		var err error
		if cal, err = backbone.ParseCalibration(p.Calibration); err != nil {
			return nil, fmt.Errorf("model pipeline: %w", err)
		}
	}
	return m.Quantize(cal)
}

// PresetOf converts a model file's transform back to a preset.
func PresetOf(t modelfile.Transform) (transform.Preset, error) {
	f, err := transform.ParseFilter(t.Filter)
	if err != nil {
		return transform.Preset{}, err
	}
	return transform.Preset{Name: t.Preset, Resize: t.Resize, Filter: f, Crop: t.Crop, Mean: t.Mean, Std: t.Std}, nil
}

// Pipeline describes the extractor for a model file.
func (e *Extractor) Pipeline() *modelfile.Pipeline {
	if c := e.cal.Load(); c != nil {
		return c.Pipeline()
	}
	i, _ := e.Backbone.OutputIndex(e.Output)
	p := e.Preset
	mp := &modelfile.Pipeline{Backbone: e.Spec, Name: e.Backbone.Name, WeightsHash: e.Backbone.Hash, Output: e.Output,
		Dim: e.Backbone.Dims[i], Transform: modelfile.Transform{Preset: p.Name, Resize: p.Resize, Filter: p.Filter.String(),
			Crop: p.Crop, Mean: p.Mean, Std: p.Std}}
	if e.Backbone.Precision == backbone.INT8 {
		mp.Precision = string(backbone.INT8)
		if e.Backbone.Calib != nil {
			mp.Calibration = e.Backbone.Calib.Text()
		}
	}
	return mp
}

// CalibOptions choose how an fp32 backbone is calibrated into an int8
// one (see Int8).
type CalibOptions struct {
	N       int // calibration images, spread evenly over the data (CalibrationImages)
	Method  backbone.CalibMethod
	Threads int // preprocessing and ONNX Runtime threads (0: all CPUs)
}

// clone returns a new extractor with e's description and settings (not
// its session or calibration state), its backbone m.
func (e *Extractor) clone(m *backbone.Model) *Extractor {
	return &Extractor{Backbone: m, Spec: e.Spec, Output: e.Output, Preset: e.Preset, Decoder: e.Decoder, CacheDir: e.CacheDir,
		BatchSize: e.BatchSize, Threads: e.Threads, Workers: e.Workers, Spin: e.Spin, Progress: e.Progress}
}

// Int8 returns e with its backbone's int8 graph, calibrated on images
// (the training images of the model being made) with e's preset; an
// extractor already int8 is returned as it is. The result's Pipeline
// records the calibration, so that the same graph is rebuilt later
// without the images (AsPipeline, ForModel).
func (e *Extractor) Int8(ctx context.Context, images dataset.Dataset, o CalibOptions) (*Extractor, error) {
	if e.Backbone.Precision == backbone.INT8 {
		return e, nil
	}
	q, err := Int8(ctx, e.Backbone, dataset.WithDecoder(images, e.Decoder), e.Preset, o.Method, o.N, o.Threads)
	if err != nil {
		return nil, err
	}
	return e.clone(q), nil
}

// Int8Later returns an extractor of e's int8 graph that is calibrated
// later, on the images of a new model's first learn (Calibrate), as Int8
// is on a data set: the server's int8 backbone for a new model. Until
// then Calibrated is false and Features fails with ErrUncalibrated.
func (e *Extractor) Int8Later(o CalibOptions) *Extractor {
	c := e.clone(e.Backbone)
	c.int8 = &o
	return c
}

// Calibrated reports whether Features may be called: false only for an
// extractor of Int8Later before Calibrate succeeds (then true for good).
func (e *Extractor) Calibrated() bool { return e.int8 == nil || e.cal.Load() != nil }

// Calibrate calibrates an extractor of Int8Later on n images (image(i)
// returns image i: a learn's) and returns the pipeline the model records.
// It compiles the int8 graph for Features. An extractor that waits for
// no calibration returns its own pipeline.
func (e *Extractor) Calibrate(ctx context.Context, n int, image func(i int) (*imageio.RGB, error)) (*modelfile.Pipeline, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.Calibrated() {
		return e.Pipeline(), nil
	}
	q, err := e.Int8(ctx, imageList{n, image}, *e.int8)
	if err != nil {
		return nil, err
	}
	if err := q.Open(); err != nil {
		return nil, err
	}
	e.cal.Store(q)
	return q.Pipeline(), nil
}

// Dim returns the feature dimension.
func (e *Extractor) Dim() int {
	i, _ := e.Backbone.OutputIndex(e.Output)
	return e.Backbone.Dims[i]
}

// Name returns the backbone's name (with " (int8)" for Int8Later's).
func (e *Extractor) Name() string {
	if e.int8 != nil {
		return e.Backbone.Name + " (int8)"
	}
	return e.Backbone.Name
}

// Open compiles the backbone on ONNX Runtime for Features now, so that
// an error shows before the first image (Features compiles it otherwise);
// an extractor that waits for its calibration compiles at Calibrate.
func (e *Extractor) Open() error {
	if e.int8 != nil {
		return nil
	}
	_, err := e.session()
	return err
}

// session returns Features' session, compiling it at the first call.
func (e *Extractor) session() (*session, error) {
	if s := e.sess.Load(); s != nil {
		return s, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if s := e.sess.Load(); s != nil {
		return s, nil
	}
	out, err := e.Backbone.OutputIndex(e.Output)
	if err != nil {
		return nil, err
	}
	s, err := newSession(e.Backbone, out, e.Preset, sessionOptions{BatchSize: e.BatchSize, Workers: e.Workers,
		ORT: backbone.SessionOptions{Threads: e.Threads, NoSpin: !e.Spin}})
	if err != nil {
		return nil, err
	}
	e.sess.Store(s)
	return s, nil
}

// Features returns the len(imgs)×Dim() features of decoded images:
// preprocessed in parallel and run through the backbone in batches,
// overlapped. It is safe for concurrent use.
func (e *Extractor) Features(ctx context.Context, imgs []*imageio.RGB) ([]float32, error) {
	if e.int8 != nil {
		c := e.cal.Load()
		if c == nil {
			return nil, ErrUncalibrated
		}
		return c.Features(ctx, imgs)
	}
	s, err := e.session()
	if err != nil {
		return nil, err
	}
	return s.Images(ctx, imgs)
}

// Subset returns the len(idx)×Dim() features of images idx of data set ds
// (decoded with e's Decoder, never cached) through Features' session,
// kept between calls: a part of a data set extracted by a process that
// extracts many parts (a Beam worker's shards), as Dataset extracts a
// whole one. A decoding error is an *ImageError whose Index is the
// image's position in ds. It is safe for concurrent use.
func (e *Extractor) Subset(ctx context.Context, ds dataset.Dataset, idx []int) ([]float32, error) {
	if e.int8 != nil {
		c := e.cal.Load()
		if c == nil {
			return nil, ErrUncalibrated
		}
		return c.Subset(ctx, ds, idx)
	}
	for _, i := range idx {
		if i < 0 || i >= ds.Len() {
			return nil, fmt.Errorf("extract: image %d of a data set of %d", i, ds.Len())
		}
	}
	s, err := e.session()
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(idx)*s.Dim())
	if err := s.Extract(ctx, dataset.Subset(dataset.WithDecoder(ds, e.Decoder), idx), 0, len(idx), out, nil); err != nil {
		if ie, ok := errors.AsType[*ImageError](err); ok {
			ie.Index = idx[ie.Index]
		}
		return nil, err
	}
	return out, nil
}

// Close releases the ONNX Runtime session of Features (and of the
// calibrated graph); the extractor compiles a new one if used again.
func (e *Extractor) Close() error {
	var err error
	if c := e.cal.Load(); c != nil {
		err = c.Close()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if s := e.sess.Swap(nil); s != nil {
		err = errors.Join(err, s.Close())
	}
	return err
}

// job is the Run of data set ds (cache key key) through e.
func (e *Extractor) job(ds dataset.Dataset, key string) (*Job, error) {
	out, err := e.Backbone.OutputIndex(e.Output)
	if err != nil {
		return nil, err
	}
	return &Job{Data: dataset.WithDecoder(ds, e.Decoder), DataKey: key, Model: e.Backbone, Preset: e.Preset, Output: out,
		CacheDir: e.CacheDir, BatchSize: e.BatchSize, Threads: e.Threads, Workers: e.Workers, Spin: e.Spin, Progress: e.Progress}, nil
}

// Dataset extracts (or loads from the cache, keyed by dataKey) the
// features of a data set (Run); it reports whether they came from the
// cache.
func (e *Extractor) Dataset(ctx context.Context, ds dataset.Dataset, dataKey string) (*features.Set, bool, error) {
	j, err := e.job(ds, dataKey)
	if err != nil {
		return nil, false, err
	}
	return Run(ctx, j)
}

// CachePath returns where Dataset caches the features of the data set
// whose cache key is dataKey.
func (e *Extractor) CachePath(dataKey string) string {
	j, err := e.job(nil, dataKey)
	if err != nil {
		return ""
	}
	return j.CachePath()
}

// Files extracts the features of image files (never cached).
func (e *Extractor) Files(ctx context.Context, paths []string) (*features.Set, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("no images")
	}
	j, err := e.job(dataset.Files{Paths: paths, Decoder: e.Decoder}, "")
	if err != nil {
		return nil, err
	}
	j.CacheDir = ""
	s, _, err := Run(ctx, j)
	return s, err
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
