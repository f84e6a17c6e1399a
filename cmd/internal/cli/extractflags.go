package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/intake"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/extract"
	"github.com/flycl/flycl/vision/imageio"
	"github.com/flycl/flycl/vision/transform"
)

// ExtractFlags select a data set and a backbone.
type ExtractFlags struct {
	Backbone, Preset string
	Output           string
	Batch, Threads   int
	Quiet            bool
	MaxPixels        int64
	DecodePixels     int64
	pixels           *imageio.Budget // made from DecodePixels at the first use
	Precision        string
	Calib            int
	CalibMethod      string
	resolved         *extract.Extractor // the command's, made at the first use: one calibration for both splits
}

func (e *ExtractFlags) Register(c *cobra.Command) {
	fs := c.Flags()
	fs.StringVar(&e.Backbone, "backbone", "", "backbone: "+strings.Join(extract.Backbones, ", ")+" (images without one: the model's, else "+extract.DefaultBackbone+"; squeezenet and mobilenetv2 without :DIR use $"+EnvModels+", else the weights built into flycl)")
	fs.StringVar(&e.Preset, "preset", "", "transform preset (default: the backbone's): "+strings.Join(transform.PresetNames(), ", "))
	fs.String("cache", ".cache/features", "feature cache directory (\"\" disables caching and resuming; default $"+EnvCache+")")
	fs.String("ort-lib", "", "path to libonnxruntime.so (default $"+EnvORTLib+", else where scripts/install-deps puts it; see flycl help environment)")
	fs.StringVar(&e.Output, "output", "features", "backbone output to extract: features, logits, or blocks (ViT: LayerNorm of the mean CLS over blocks, F-OAL's feature)")
	fs.IntVar(&e.Batch, "batch", 32, "images per inference batch")
	fs.IntVar(&e.Threads, "threads", 0, "ONNX Runtime threads (0: all CPUs)")
	fs.Int64Var(&e.MaxPixels, "max-image-pixels", imageio.DefaultMaxPixels, "refuse images with more pixels than this, as PIL does (its limit is the default; -1: no limit)")
	fs.Int64Var(&e.DecodePixels, "decode-pixels", imageio.DefaultBudgetPixels, "pixels of the images being decoded at once, by all the decoding goroutines together (an image larger than this is decoded alone; -1: no bound)")
	fs.StringVar(&e.Precision, "precision", "fp32", "backbone arithmetic: fp32, or int8 (static per-channel quantization calibrated on --calib training images for CNNs, dynamic for ViT)")
	fs.IntVar(&e.Calib, "calib", 64, "int8: training images for the activation ranges (spread evenly over the training split)")
	fs.StringVar(&e.CalibMethod, "calib-method", DefaultCalibMethod, "int8: how the activation ranges are chosen from the calibration images: minmax, mse, percentile or percentile:P (see go doc backbone.CalibMethod)")
}

// Check refuses the flags' values out of range, before any image is
// read: a value the help does not offer (--batch -1, --threads -2,
// --max-image-pixels -5) is not taken for the default or for no limit.
func (e *ExtractFlags) Check() error {
	switch {
	case e.MaxPixels == 0 || e.MaxPixels < -1:
		return flycl.Input(fmt.Errorf("--max-image-pixels %d: give a positive limit, or -1 for none", e.MaxPixels))
	case e.DecodePixels == 0 || e.DecodePixels < -1:
		return flycl.Input(fmt.Errorf("--decode-pixels %d: give a positive bound, or -1 for none", e.DecodePixels))
	case e.Batch < 1:
		return flycl.Input(fmt.Errorf("--batch %d: give at least 1 image per inference batch", e.Batch))
	case e.Threads < 0:
		return flycl.Input(fmt.Errorf("--threads %d: give 0 (one per CPU) or a positive number", e.Threads))
	}
	return nil
}

// Decoder returns the image decoder the flags ask for: the pixel limit,
// and the command's decoding budget.
func (e *ExtractFlags) Decoder() imageio.Decoder {
	return imageio.Decoder{MaxPixels: e.MaxPixels, Budget: e.Budget()}
}

// Budget returns the one decoding budget of the command (--decode-pixels)
// shared by all its decoding goroutines.
func (e *ExtractFlags) Budget() *imageio.Budget {
	if e.pixels == nil {
		e.pixels = imageio.NewBudget(e.DecodePixels)
	}
	return e.pixels
}

// DefaultCalibMethod is --calib-method's default: the MSE-optimal range
// per activation (docs/BACKBONES.md, "int8 backbones": on the CIFAR-10 subset it
// cut MobileNetV2's int8 Ā loss from 1.30 to 0.54 points and left
// SqueezeNet's features as close to fp32 as min/max did).
const DefaultCalibMethod = "mse"

// Method returns --calib-method.
func (e *ExtractFlags) Method() (backbone.CalibMethod, error) {
	m, err := backbone.ParseCalibMethod(e.CalibMethod)
	if err != nil {
		return "", fmt.Errorf("--calib-method: %w", err)
	}
	return m, nil
}

// Extractor resolves the flags into the one extractor of the command
// (intake.ResolveExtractor for a new model: --backbone, --output, --preset,
// --precision; an int8 graph calibrated on split calib of spec), made at
// the first call: one calibration for both splits.
func (e *ExtractFlags) Extractor(cmd *cobra.Command, spec dataset.Spec, calib string) (*extract.Extractor, error) {
	if e.resolved != nil {
		return e.resolved, nil
	}
	prec, err := backbone.ParsePrecision(e.Precision)
	if err != nil {
		return nil, fmt.Errorf("--precision: %w", err)
	}
	o := intake.ExtractorOptions{Spec: e.Backbone, Default: extract.DefaultBackbone, Output: e.Output, Precision: prec, Decoder: e.Decoder(),
		Open: func(s extract.BackboneSpec) (*backbone.Model, error) {
			m, err := OpenBackboneSpec(s)
			if err != nil {
				return nil, fmt.Errorf("%w (see \"flycl help environment\" for %s)", err, EnvModels)
			}
			return m, nil
		}}
	if e.Preset != "" {
		p, err := transform.LookupPreset(e.Preset)
		if err != nil {
			return nil, err
		}
		o.Preset = &p
	}
	if prec == backbone.INT8 {
		if o.Calib.Method, err = e.Method(); err != nil {
			return nil, err
		}
		o.Calib.N, o.Calib.Threads = e.Calib, e.Threads
		o.CalibImages = func() (dataset.Dataset, error) {
			train, _, err := intake.OpenSplit(spec, calib)
			return train, err
		}
	}
	ex, err := intake.ResolveExtractor(cmd.Context(), o)
	if err != nil {
		return nil, err
	}
	ex.CacheDir, ex.BatchSize, ex.Threads = CacheDir(cmd.Flags()), e.Batch, e.Threads
	e.resolved = ex
	return ex, nil
}

// Features extracts (or loads from the cache) one split of the data set
// ("": a split-less folder whole): intake.ExtractFeatures, through the
// extractor the flags resolve.
func (e *ExtractFlags) Features(cmd *cobra.Command, spec dataset.Spec, split string, quiet bool) (*features.Set, error) {
	if err := e.Check(); err != nil {
		return nil, err
	}
	lib, err := ORTLibrary(cmd.Flags())
	if err != nil {
		return nil, err
	}
	if err := backbone.Init(lib); err != nil {
		return nil, err
	}
	sp := intake.SplitOf(split)
	var ex *extract.Extractor
	s, err := intake.ExtractFeatures(cmd.Context(), spec, sp, e.Decoder(), func(skipped []string) (*extract.Extractor, error) {
		if len(skipped) > 0 && !quiet {
			fmt.Fprintf(os.Stderr, "warning: %s %s: skipped %d WebP image(s), which flycl cannot decode as PIL does (first: %s)\n", spec, sp.Name, len(skipped), skipped[0])
		}
		var err error
		if ex, err = e.Extractor(cmd, spec, sp.Calib); err != nil {
			return nil, err
		}
		bar := NewProgress(quiet, 1000)
		ex.Progress = func(done, total int, rate float64) {
			bar.Update(done, total, fmt.Sprintf("extract %s %s (%.1f images/s)", ex.Backbone.Name, sp.Name, rate))
		}
		return ex, nil
	})
	if err != nil {
		return nil, err
	}
	if !quiet {
		if s.Cached {
			fmt.Fprintf(os.Stderr, "extract %s %s: %d features from the cache %s\n", ex.Backbone.Name, sp.Name, s.N, s.CachePath)
		} else {
			fmt.Fprintf(os.Stderr, "extract %s %s: %d images in %.1fs (%.1f images/s)\n", ex.Backbone.Name, sp.Name, s.N, s.ExtractSeconds, float64(s.N)/s.ExtractSeconds)
		}
	}
	return s.Set, nil
}
