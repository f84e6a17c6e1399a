package intake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/extract"
	"github.com/flycl/flycl/vision/imageio"
)

// ErrNoInput is returned by OpenInput when the options name no samples,
// or more than one kind of them.
var ErrNoInput = errors.New("intake: give exactly one input: a feature file, a data set or image files")

// InputOptions name the samples of a learn, a statistics shard, a
// prediction or a pipeline run: exactly one of a feature file, a data set
// split or image files.
type InputOptions struct {
	// Features is a feature file (.npz, features.Load). ClassNames, when
	// not nil, replace the class_names it records.
	Features   string
	ClassNames []string
	// Data is a data set (its path resolved) and Split the split to read
	// (OpenData: a folder without that split reads its classes directly).
	Data  dataset.Spec
	Split string
	// Pixels reads a grey data set (dataset.Spec.Grey: MNIST, Fashion-MNIST)
	// as its raw pixels (dataset.Spec.Pixels), without a backbone.
	Pixels bool
	// Files are image files without labels (never cached).
	Files []string
	// Model is the pipeline of the model the samples are for (nil: it
	// records none) and Trained whether it has learned anything: a feature
	// file's recorded pipeline is checked against them (FeaturePipeline).
	Model   *modelfile.Pipeline
	Trained bool
	// SkipBad leaves out the images that cannot be read or decoded
	// (Samples.Bad lists them); without it Samples refuses them all in one
	// *BadFilesError.
	SkipBad bool
}

// Input is an opened source of samples, not yet read through a backbone:
// its size, class names and sample identities are known, its features
// are at hand (a feature file, raw pixels) or made by Samples (images).
type Input struct {
	// Source identifies where the samples come from (a statistics shard's
	// Source; the prefix of every sample key): FeatureSource for a feature
	// file, "pixels " and the data key for raw pixels, the data key
	// (dataset.Spec.Key) for a data set; "" for image files.
	Source string
	// Desc describes the input for messages ("features F.npz", ...).
	Desc string
	// Set holds the samples when they are features already (a feature
	// file, raw pixels); nil when they are images (Data).
	Set *features.Set
	// Data holds the images; nil when Set holds features.
	Data dataset.Dataset
	// Pipeline is how a feature file's features were made, checked against
	// the model's (FeaturePipeline); nil for raw pixels and images (whose
	// pipeline is the extractor's).
	Pipeline *modelfile.Pipeline
	// Warnings are what the caller should tell the user (a feature file
	// whose pipeline cannot be checked against the model's).
	Warnings []string

	classes []string
	files   bool
	skipBad bool
}

// OpenInput opens the samples o names: it reads a feature file or raw
// pixels, or opens a data set split or image files for extraction; it
// normalizes the class names (flycl.NormalizeClassNames) and names every
// sample (Key) as flycl stats and the Beam pipeline both do, so that their
// statistics merge.
func OpenInput(o InputOptions) (*Input, error) {
	given := 0
	for _, b := range []bool{o.Features != "", o.Data.Kind != "", len(o.Files) > 0} {
		if b {
			given++
		}
	}
	if given != 1 {
		return nil, ErrNoInput
	}
	in := &Input{skipBad: o.SkipBad}
	where := "" // what errors about class names are prefixed with
	switch {
	case o.Features != "":
		s, err := features.Load(o.Features)
		if err != nil {
			return nil, err
		}
		if o.ClassNames != nil {
			// every label needs its name: refused naming the option, not
			// at the first sample without one
			if top := slices.Max(append([]int{-1}, s.Labels...)); top >= len(o.ClassNames) {
				return nil, &InputError{Field: "ClassNames", Value: o.ClassNames, Rule: flycl.ErrBadInput, Message: func(e *InputError) string {
					return fmt.Sprintf("%s: %s gives %d class names, but its labels go up to %d: give %d names, one per label 0 to %d",
						o.Features, e.NameOf("ClassNames"), len(o.ClassNames), top, top+1, top)
				}}
			}
			s.ClassNames = o.ClassNames
		}
		fp, warn, err := FeaturePipeline(o.Features, s, o.Model, o.Trained)
		if err != nil {
			return nil, err
		}
		if warn != "" {
			in.Warnings = append(in.Warnings, warn)
		}
		if in.Source, err = FeatureSource(o.Features); err != nil {
			return nil, err
		}
		in.Set, in.Pipeline, in.Desc, where = s, fp, "features "+o.Features, o.Features
	case len(o.Files) > 0:
		in.Data, in.files, in.Desc = dataset.Files{Paths: o.Files}, true, fmt.Sprintf("%d images", len(o.Files))
	case o.Pixels:
		s, err := o.Data.Pixels(o.Split)
		if err != nil {
			return nil, err
		}
		key, err := o.Data.Key(o.Split)
		if err != nil {
			return nil, err
		}
		in.Set, in.Source, in.Desc = s, "pixels "+key, o.Data.String()+" pixels"
	default:
		ds, key, err := OpenData(o.Data, o.Split)
		if err != nil {
			return nil, err
		}
		in.Data, in.Source, in.Desc = ds, key, o.Data.String()
	}
	if where == "" {
		where = in.Desc
	}
	var cn []string
	if in.Set != nil {
		cn = in.Set.ClassNames
	} else {
		cn = in.Data.Classes()
	}
	if cn != nil {
		var err error
		if in.classes, err = flycl.NormalizeClassNames(cn); err != nil {
			return nil, fmt.Errorf("%s: intake: class names: %w", where, err)
		}
	}
	return in, nil
}

// Len returns the number of samples.
func (in *Input) Len() int {
	if in.Set != nil {
		return in.Set.N
	}
	return in.Data.Len()
}

// Images reports whether the samples are images, which Samples reads
// through an extractor.
func (in *Input) Images() bool { return in.Set == nil }

// Label returns sample i's label.
func (in *Input) Label(i int) int {
	if in.Set != nil {
		return in.Set.Labels[i]
	}
	return in.Data.Label(i)
}

// Classes returns the class names by label, normalized; nil when the
// input names none (labels are then named by their decimal numbers).
func (in *Input) Classes() []string { return in.classes }

// ClassName returns the name of label l: its class name, else (no class
// names, or none for l) its decimal number.
func (in *Input) ClassName(l int) string {
	if l >= 0 && l < len(in.classes) && in.classes[l] != "" {
		return in.classes[l]
	}
	return strconv.Itoa(l)
}

// Names returns the class name of every label in labels (Names with the
// input's class names): an error for a label without a name when the
// input has class names.
func (in *Input) Names(labels []int) ([]string, error) { return Names(labels, in.classes) }

// Key returns sample i's key (modelfile.SampleID hashes it): RowKey of
// the source for a feature file or raw pixels, PathKey of the image's path
// for a data set, the path itself for image files.
func (in *Input) Key(i int) string {
	switch {
	case in.Set != nil:
		return RowKey(in.Source, i)
	case in.files:
		return in.Data.Path(i)
	}
	return PathKey(in.Source, in.Data.Path(i))
}

// Samples are the features of a range of an input's samples.
type Samples struct {
	X      []float32 // N×D, row-major
	N, D   int
	Labels []int
	Keys   []string // Input.Key of each sample
	Paths  []string // the samples' paths, when the input has them
	// Pipeline is how the features were made: the input's (a feature
	// file's) or the extractor's; nil when unknown.
	Pipeline *modelfile.Pipeline
	// Cached reports that the features came from the extractor's cache.
	Cached bool
	// Bad are the images left out because they cannot be read or decoded
	// (InputOptions.SkipBad), in order; the fields above hold the others.
	Bad []BadFile
}

// Samples returns the features of samples [lo, hi): rows of the feature
// file or pixels (shared with the input, not copied), or the images of
// that range extracted through e (only
// they are read; cached under the data key, suffixed "#rowsLO-HI" for a
// part of the data set). e may be nil when the input is not images.
func (in *Input) Samples(ctx context.Context, e *extract.Extractor, lo, hi int) (*Samples, error) {
	if lo < 0 || hi < lo || hi > in.Len() {
		return nil, fmt.Errorf("intake: samples [%d, %d) of %d", lo, hi, in.Len())
	}
	keys := make([]string, 0, hi-lo)
	for i := lo; i < hi; i++ {
		keys = append(keys, in.Key(i))
	}
	if s := in.Set; s != nil {
		out := &Samples{X: s.X[lo*s.D : hi*s.D], N: hi - lo, D: s.D, Labels: s.Labels[lo:hi], Keys: keys, Pipeline: in.Pipeline}
		if s.Paths != nil {
			out.Paths = s.Paths[lo:hi]
		}
		return out, nil
	}
	if e == nil {
		return nil, fmt.Errorf("intake: %s: images need an extractor", in.Desc)
	}
	var ds dataset.Dataset
	var key string
	run := func(ds dataset.Dataset, key string) (*features.Set, bool, error) { return e.Dataset(ctx, ds, key) }
	switch {
	case in.files:
		ds = dataset.Files{Paths: in.Data.(dataset.Files).Paths[lo:hi]}
		run = func(ds dataset.Dataset, _ string) (*features.Set, bool, error) {
			paths := make([]string, ds.Len())
			for i := range paths {
				paths[i] = ds.Path(i)
			}
			s, err := e.Files(ctx, paths)
			return s, false, err
		}
	case lo == 0 && hi == in.Len():
		ds, key = in.Data, in.Source
	default:
		ds, key = rows{in.Data, lo, hi}, fmt.Sprintf("%s#rows%d-%d", in.Source, lo, hi)
	}
	s, cached, good, bad, err := extractGood(ctx, e, ds, in.skipBad, run, key)
	if err != nil {
		return nil, err
	}
	if good != nil {
		k := make([]string, len(good))
		for i, g := range good {
			k[i] = keys[g]
		}
		keys = k
	}
	return &Samples{X: s.X, N: s.N, D: s.D, Labels: s.Labels, Keys: keys, Paths: s.Paths, Pipeline: e.Pipeline(), Cached: cached, Bad: bad}, nil
}

// rows is samples [lo, hi) of a data set.
type rows struct {
	dataset.Dataset
	lo, hi int
}

func (v rows) Len() int                          { return v.hi - v.lo }
func (v rows) Label(i int) int                   { return v.Dataset.Label(v.lo + i) }
func (v rows) Path(i int) string                 { return v.Dataset.Path(v.lo + i) }
func (v rows) Image(i int) (*imageio.RGB, error) { return v.Dataset.Image(v.lo + i) }

// FeaturePipeline reads the pipeline identity a feature file records
// (flycl extract writes it) and checks it against the model's pipeline mp
// (trained: the model has learned classes). It returns the pipeline to
// learn with: the file's when it matches mp, or when a model without one
// has learned nothing yet (it adopts it); nil when the file records none
// (files from before flycl extract recorded it: accepted, with a warning
// when the model has a pipeline to compare with) or when the model
// learned from features of unknown origin (nothing to compare).
func FeaturePipeline(path string, s *features.Set, mp *modelfile.Pipeline, trained bool) (p *modelfile.Pipeline, warning string, err error) {
	if s.Pipeline == "" {
		if mp != nil {
			warning = fmt.Sprintf("%s records no pipeline identity (written before flycl extract recorded one, or elsewhere): it cannot be checked against the model's backbone %s (weights %.12s)",
				path, mp.Backbone, mp.WeightsHash)
		}
		return nil, warning, nil
	}
	fp, err := modelfile.ParsePipeline(s.Pipeline)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	if fp.Dim != 0 && fp.Dim != s.D {
		return nil, "", fmt.Errorf("%s: the pipeline identity says %d-dimensional features, the file holds %d", path, fp.Dim, s.D)
	}
	switch {
	case mp != nil:
		if err := mp.Check(fp); err != nil {
			return nil, "", fmt.Errorf("%s was made by another pipeline than the model's: %w", path, err)
		}
		return fp, "", nil
	case trained:
		return nil, "", nil
	}
	return fp, "", nil
}

// PixelsInput reports whether a data set is read as its raw pixels
// (InputOptions.Pixels), as flycl stats does: a grey data set (MNIST,
// Fashion-MNIST) when no backbone is asked for (backbone "") and the
// model, whose pipeline is mp, has none.
func PixelsInput(spec dataset.Spec, backbone string, mp *modelfile.Pipeline) bool {
	return spec.Grey() && backbone == "" && mp == nil
}

// Shard returns the samples of shard i of n of the input: [i·N/n,
// (i+1)·N/n) of its N samples (Samples; only those images are extracted).
func (in *Input) Shard(ctx context.Context, e *extract.Extractor, i, n int) (*Samples, error) {
	if n <= 0 || i < 0 || i >= n {
		return nil, fmt.Errorf("intake: shard %d of %d: want 0 <= i < n", i, n)
	}
	total := in.Len()
	return in.Samples(ctx, e, i*total/n, (i+1)*total/n)
}

// Names returns the class name of every sample of a labelled feature set:
// classNames[label] when given (the set's own or the user's), else the
// label's decimal number. The class names are checked and normalised as
// flycl.NormalizeClassNames does (the check flycl stats makes): two labels
// named alike, which would merge into one class, are an error, as is a
// name that breaks a rule of flycl.NormalizeClassName.
func Names(labels []int, classNames []string) ([]string, error) {
	if classNames != nil {
		var err error
		if classNames, err = flycl.NormalizeClassNames(classNames); err != nil {
			return nil, fmt.Errorf("intake: class names: %w", err)
		}
	}
	out := make([]string, len(labels))
	for i, l := range labels {
		switch {
		case classNames == nil:
			out[i] = fmt.Sprint(l)
		case l < 0 || l >= len(classNames):
			return nil, fmt.Errorf("intake: sample %d has label %d, but there are %d class names", i, l, len(classNames))
		default:
			out[i] = classNames[l]
		}
	}
	return out, nil
}
