package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/app/intake"
	"github.com/flycl/flycl/cmd/internal/cli"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/fielderr"
	"github.com/flycl/flycl/internal/flagbind"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/extract"
	"github.com/flycl/flycl/vision/imageio"
	"github.com/flycl/flycl/vision/transform"
)

// inputFlags select labelled (or unlabelled) samples for a model command:
// a data set through a backbone, or a feature file.
type inputFlags struct {
	ext        cli.ExtractFlags
	data       string
	split      string
	features   string
	classNames string
	skipBad    bool // leave out images that cannot be read (intake.InputOptions.SkipBad)
}

func (f *inputFlags) register(c *cobra.Command, split string) {
	f.ext.Register(c)
	fs := c.Flags()
	fs.StringVar(&f.data, "data", "", "images as kind:path (folder:DIR reads DIR/<class>/<image>, or DIR/<split>/<class>/<image>); through --backbone, else the model's, else "+extract.DefaultBackbone)
	fs.StringVar(&f.split, "split", split, "split of --data to read")
	fs.StringVar(&f.features, "features", "", "feature file (.npz with features, labels, optional class_names) instead of images")
	fs.StringVar(&f.classNames, "class-names", "", "comma-separated class names for the labels 0,1,... of --features (default: the file's class_names, else the numbers)")
	fs.BoolVar(&f.ext.Quiet, "quiet", false, "no progress output")
}

// samples are loaded inputs: features, and class names when known.
type samples struct {
	x        []float32
	d        int
	names    []string // nil when unlabelled
	paths    []string
	pipeline *modelfile.Pipeline // nil for feature files
	desc     string
	bad      []intake.BadFile // images left out (skipBad)
}

// extractor resolves the flags into intake.ExtractorOptions (--backbone,
// else the model's pipeline mp, else extract.DefaultBackbone; deploy decides what
// a trained model fixes and calibrates a new model's int8 backbone on
// --data) and opens the extractor.
func (f *inputFlags) extractor(cmd *cobra.Command, mp *modelfile.Pipeline, trained bool) (*extract.Extractor, error) {
	if err := f.ext.Check(); err != nil {
		return nil, err
	}
	o := intake.ExtractorOptions{Spec: f.ext.Backbone, Default: extract.DefaultBackbone, Model: mp, Trained: trained,
		Output: f.ext.Output, Decoder: imageio.Decoder{MaxPixels: f.ext.MaxPixels, Budget: f.ext.Budget()},
		Open: func(spec extract.BackboneSpec) (*backbone.Model, error) {
			bm, err := cli.OpenBackboneSpec(spec)
			if err != nil {
				return nil, fmt.Errorf("%w (see \"flycl help environment\" for %s)", err, cli.EnvModels)
			}
			return bm, nil
		}}
	if f.ext.Preset != "" {
		p, err := transform.LookupPreset(f.ext.Preset)
		if err != nil {
			return nil, err
		}
		o.Preset = &p
	}
	prec, err := backbone.ParsePrecision(f.ext.Precision)
	if err != nil {
		return nil, fmt.Errorf("--precision: %w", err)
	}
	if fl := cmd.Flags().Lookup("precision"); fl != nil && fl.Changed {
		o.Precision = prec // else the model's (fp32, the flag's default, for a new model)
	}
	if prec == backbone.INT8 {
		if o.Calib.Method, err = f.ext.Method(); err != nil {
			return nil, err
		}
		o.Calib.N, o.Calib.Threads = f.ext.Calib, f.ext.Threads
		if f.data != "" {
			// calibrate on the data being learned (its training images)
			o.CalibImages = func() (dataset.Dataset, error) {
				ds, err := dataset.ParseSpec(f.data)
				if err != nil {
					return nil, fmt.Errorf("--data: %w", err)
				}
				train, _, err := intake.OpenData(ds, f.split)
				return train, err
			}
		}
	}
	if _, err := resolver(cmd.Flags()).InitORT(); err != nil {
		return nil, err
	}
	e, err := intake.ResolveExtractor(cmd.Context(), o)
	switch {
	case errors.Is(err, intake.ErrNoPipeline):
		return nil, fmt.Errorf("%w (give --features)", err)
	case errors.Is(err, intake.ErrNoCalibration):
		return nil, fmt.Errorf("--precision int8 needs --data to calibrate the int8 backbone on: %w", err)
	case errors.Is(err, intake.ErrPrecision):
		return nil, fmt.Errorf("--precision %s: %w", prec, err)
	case err != nil:
		return nil, err
	}
	bm := e.Backbone
	e.CacheDir, e.BatchSize, e.Threads = cli.CacheDir(cmd.Flags()), f.ext.Batch, f.ext.Threads
	if !f.ext.Quiet {
		last := time.Now()
		e.Progress = func(done, total int, rate float64) {
			if done == total || time.Since(last) > 2*time.Second {
				fmt.Fprintf(os.Stderr, "extract %s: %d/%d images, %.1f images/s\n", bm.Name, done, total, rate)
				last = time.Now()
			}
		}
	}
	return e, nil
}

// open resolves the input flags (or the images named on the command line)
// into a intake.InputRequest and opens the input it names
// (intake.InputRequest.Open) for a model with pipeline mp (trained: it has
// learned classes). pixels reads a grey data set without a backbone as raw
// pixels (flycl stats).
func (f *inputFlags) open(cmd *cobra.Command, mp *modelfile.Pipeline, trained bool, images []string, labelled, pixels bool) (*intake.Input, error) {
	in, err := f.request(cmd, images, labelled, pixels).Open(mp, trained)
	if err != nil {
		return nil, flagNames(err)
	}
	for _, w := range in.Warnings {
		fmt.Fprintf(os.Stderr, "warning: %s\n", w)
	}
	return in, nil
}

// request is the intake.InputRequest of the flags.
func (f *inputFlags) request(cmd *cobra.Command, images []string, labelled, pixels bool) *intake.InputRequest {
	r := &intake.InputRequest{Files: images, Data: f.data, Features: f.features, Split: f.split, Backbone: f.ext.Backbone,
		Labelled: labelled, Pixels: pixels, SkipBad: f.skipBad,
		ParseData: func(data string) (dataset.Spec, error) { return (&cli.DataFlags{Data: data}).Spec() }}
	if f.classNames != "" {
		r.ClassNames = strings.Split(f.classNames, ",")
	}
	for _, name := range []string{"precision", "calib", "calib-method"} {
		if fl := cmd.Flags().Lookup(name); fl != nil && fl.Changed {
			r.BackboneOptions = append(r.BackboneOptions, inputOptionOf[name])
		}
	}
	return r
}

// inputOptionOf is the backbone option (intake.InputRequest.BackboneOptions)
// of a flag.
var inputOptionOf = map[string]string{"precision": "Precision", "calib": "Calib", "calib-method": "CalibMethod"}

// inputFlagNames are the input flags by the field of intake.InputRequest (its
// flag tags: flagbind.Names) or the backbone option they set.
func inputFlagNames() map[string]string {
	names := flagbind.Names(intake.InputRequest{})
	for flag, option := range inputOptionOf {
		names[option] = "--" + flag
	}
	return names
}

// flagNames makes the field error in err name the input flags.
func flagNames(err error) error { return namedByFlags(err, inputFlagNames()) }

// namedByFlags makes the field error in err (internal/fielderr: the one
// type of every library's settings errors) name its fields as names
// does: by their flags.
func namedByFlags(err error, names map[string]string) error {
	var fe *fielderr.Error
	if errors.As(err, &fe) {
		fe.Name = func(field string) string { return names[field] }
	}
	return err
}

// samples reads shard i of n of in (intake.Input.Shard; 0 of 1: all of
// it), images through the extractor the flags resolve (extractor).
func (f *inputFlags) samples(cmd *cobra.Command, in *intake.Input, mp *modelfile.Pipeline, trained bool, i, n int) (*intake.Samples, *extract.Extractor, error) {
	var e *extract.Extractor
	if in.Images() {
		var err error
		if e, err = f.extractor(cmd, mp, trained); err != nil {
			return nil, nil, err
		}
	}
	s, err := in.Shard(cmd.Context(), e, i, n)
	if err != nil {
		return nil, nil, err
	}
	if s.Cached && !f.ext.Quiet {
		fmt.Fprintf(os.Stderr, "extract %s: %d features from the cache\n", e.Backbone.Name, s.N)
	}
	return s, e, nil
}

// load reads the samples (intake.InputRequest.Load): images named on the
// command line, a data set or a feature file. labelled says whether class
// names are required; extracting, when not nil, is told the features'
// dimension before images are extracted (intake.LoadNotes.Extracting).
func (f *inputFlags) load(cmd *cobra.Command, mp *modelfile.Pipeline, trained bool, images []string, labelled bool, extracting func(d int)) (*samples, error) {
	l, err := f.request(cmd, images, labelled, false).Load(cmd.Context(), mp, trained,
		func() (*extract.Extractor, error) { return f.extractor(cmd, mp, trained) },
		intake.LoadNotes{
			Warning: func(w string) { fmt.Fprintf(os.Stderr, "warning: %s\n", w) },
			Skipped: func(sk []string) {
				fmt.Fprintf(os.Stderr, "skipped %d file(s) that are not images (by their extension):\n  %s\n", len(sk), strings.Join(sk, "\n  "))
			},
			Cached: func(bm string, n int) {
				if !f.ext.Quiet {
					fmt.Fprintf(os.Stderr, "extract %s: %d features from the cache\n", bm, n)
				}
			},
			Bad:        func(bad *intake.BadFilesError) { fmt.Fprintf(os.Stderr, "skipped: %s\n", bad.Error()) },
			Extracting: extracting,
		})
	if err != nil {
		return nil, flagNames(err)
	}
	return &samples{x: l.X, d: l.D, names: l.Names, paths: l.Paths, pipeline: l.Pipeline, desc: l.Desc, bad: l.Bad}, nil
}
