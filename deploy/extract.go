package deploy

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/flycl/flycl/backbone"
	"github.com/flycl/flycl/dataset"
	"github.com/flycl/flycl/extract"
	"github.com/flycl/flycl/features"
	"github.com/flycl/flycl/imageio"
	"github.com/flycl/flycl/modelfile"
	"github.com/flycl/flycl/transform"
)

// Extractor turns images into a model's features: a backbone, one of its
// outputs and a transform.
type Extractor struct {
	Backbone *backbone.Model
	Spec     string // what the backbone was opened from (recorded in the model file)
	Output   string // backbone output ("features")
	Preset   transform.Preset
	// Decoder decodes the images (the zero value: PIL's pixel limit).
	Decoder imageio.Decoder
	// CacheDir caches the features of data sets ("" disables it);
	// BatchSize and Threads as in extract.Job; Progress reports.
	CacheDir  string
	BatchSize int
	Threads   int
	Progress  func(done, total int, rate float64)
}

// NewExtractor checks the output name and returns an extractor with the
// backbone's own preset unless preset is given.
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

// Pipeline describes the extractor for a model file.
func (e *Extractor) Pipeline() *modelfile.Pipeline {
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

// ForModel returns an extractor for a model file's pipeline from the
// backbone m (opened by the caller from p.Backbone or a spec of its
// own): it refuses a backbone whose weights or output differ from the
// model's, and uses the model's transform.
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

func (e *Extractor) job(ds dataset.Dataset, key string) (*extract.Job, error) {
	out, err := e.Backbone.OutputIndex(e.Output)
	if err != nil {
		return nil, err
	}
	return &extract.Job{Data: dataset.WithDecoder(ds, e.Decoder), DataKey: key, Model: e.Backbone, Preset: e.Preset, Output: out,
		CacheDir: e.CacheDir, BatchSize: e.BatchSize, Threads: e.Threads, Progress: e.Progress}, nil
}

// Dataset extracts (or loads from the cache, keyed by dataKey) the
// features of a data set; it reports whether they came from the cache.
func (e *Extractor) Dataset(ctx context.Context, ds dataset.Dataset, dataKey string) (*features.Set, bool, error) {
	j, err := e.job(ds, dataKey)
	if err != nil {
		return nil, false, err
	}
	return extract.Run(ctx, j)
}

// Files extracts the features of image files (never cached).
func (e *Extractor) Files(ctx context.Context, paths []string) (*features.Set, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("no images")
	}
	j, err := e.job(files{paths, e.Decoder}, "")
	if err != nil {
		return nil, err
	}
	j.CacheDir = ""
	s, _, err := extract.Run(ctx, j)
	return s, err
}

// files is a data set of image files without labels.
type files struct {
	paths []string
	dec   imageio.Decoder
}

func (f files) Len() int                          { return len(f.paths) }
func (f files) Label(int) int                     { return 0 }
func (f files) Classes() []string                 { return nil }
func (f files) Path(i int) string                 { return f.paths[i] }
func (f files) Image(i int) (*imageio.RGB, error) { return f.dec.DecodeFile(f.paths[i]) }

// SplitLess reports whether spec is a folder data set given as a
// directory with neither a train nor a test sub-directory: the
// DIR/<class>/<image> layout that OpenData reads for any split.
func SplitLess(spec dataset.Spec) bool {
	if spec.Kind != "folder" {
		return false
	}
	top, _ := statDir(spec.Path)
	train, _ := statDir(filepath.Join(spec.Path, "train"))
	test, _ := statDir(filepath.Join(spec.Path, "test"))
	return top && !train && !test
}

// OpenData opens a data set split for learning or testing and returns
// its cache key (dataset.Spec.Key). A folder data set given as a
// directory without a SPLIT sub-directory is read as DIR/<class>/<image>
// (how a user lays out "these 30 photos are a forklift").
func OpenData(spec dataset.Spec, split string) (dataset.Dataset, string, error) {
	if spec.Kind == "folder" && split != "" {
		sub, _ := statDir(filepath.Join(spec.Path, split))
		if top, _ := statDir(spec.Path); top && !sub {
			split = ""
		}
	}
	return OpenSplit(spec, split)
}

// OpenSplit opens exactly the split of spec (no fallback) and returns its
// cache key; split "" reads a folder data set's directory as
// DIR/<class>/<image>.
func OpenSplit(spec dataset.Spec, split string) (dataset.Dataset, string, error) {
	var ds dataset.Dataset
	var err error
	if split == "" {
		ds, err = dataset.OpenFolder(spec.Path)
	} else {
		ds, err = spec.Open(split)
	}
	if err != nil {
		return nil, "", err
	}
	key, err := spec.Key(split)
	if err != nil {
		return nil, "", err
	}
	return ds, key, nil
}
