package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/extract"
	"github.com/flycl/flycl/vision/imageio"
	"github.com/flycl/flycl/vision/transform"
)

// extractFlags select a data set and a backbone.
type extractFlags struct {
	backbone, preset string
	output           string
	batch, threads   int
	quiet            bool
	maxPixels        int64
	decodePixels     int64
	pixels           *imageio.Budget // made from decodePixels at the first use
	precision        string
	calib            int
	calibMethod      string
	resolved         *extract.Extractor // the command's, made at the first use: one calibration for both splits
}

func (e *extractFlags) register(c *cobra.Command) {
	fs := c.Flags()
	fs.StringVar(&e.backbone, "backbone", "", "backbone: "+strings.Join(extract.Backbones, ", ")+" (images without one: the model's, else "+extract.DefaultBackbone+"; squeezenet and mobilenetv2 without :DIR use $"+envModels+", else the weights built into flycl)")
	fs.StringVar(&e.preset, "preset", "", "transform preset (default: the backbone's): "+strings.Join(transform.PresetNames(), ", "))
	fs.String("cache", ".cache/features", "feature cache directory (\"\" disables caching and resuming; default $"+envCache+")")
	fs.String("ort-lib", "", "path to libonnxruntime.so (default $"+envORTLib+", else where scripts/install-deps puts it; see flycl help environment)")
	fs.StringVar(&e.output, "output", "features", "backbone output to extract: features, logits, or blocks (ViT: LayerNorm of the mean CLS over blocks, F-OAL's feature)")
	fs.IntVar(&e.batch, "batch", 32, "images per inference batch")
	fs.IntVar(&e.threads, "threads", 0, "ONNX Runtime threads (0: all CPUs)")
	fs.Int64Var(&e.maxPixels, "max-image-pixels", imageio.DefaultMaxPixels, "refuse images with more pixels than this, as PIL does (its limit is the default; -1: no limit)")
	fs.Int64Var(&e.decodePixels, "decode-pixels", imageio.DefaultBudgetPixels, "pixels of the images being decoded at once, by all the decoding goroutines together (an image larger than this is decoded alone; -1: no bound)")
	fs.StringVar(&e.precision, "precision", "fp32", "backbone arithmetic: fp32, or int8 (static per-channel quantization calibrated on --calib training images for CNNs, dynamic for ViT)")
	fs.IntVar(&e.calib, "calib", 64, "int8: training images for the activation ranges (spread evenly over the training split)")
	fs.StringVar(&e.calibMethod, "calib-method", defaultCalibMethod, "int8: how the activation ranges are chosen from the calibration images: minmax, mse, percentile or percentile:P (see go doc backbone.CalibMethod)")
}

// decoder returns the image decoder the flags ask for: the pixel limit,
// and the command's decoding budget.
func (e *extractFlags) decoder() imageio.Decoder {
	return imageio.Decoder{MaxPixels: e.maxPixels, Budget: e.budget()}
}

// budget returns the one decoding budget of the command (--decode-pixels)
// shared by all its decoding goroutines.
func (e *extractFlags) budget() *imageio.Budget {
	if e.pixels == nil {
		e.pixels = imageio.NewBudget(e.decodePixels)
	}
	return e.pixels
}

// defaultCalibMethod is --calib-method's default: the MSE-optimal range
// per activation (docs/BACKBONES.md, "int8 backbones": on the CIFAR-10 subset it
// cut MobileNetV2's int8 Ā loss from 1.30 to 0.54 points and left
// SqueezeNet's features as close to fp32 as min/max did).
const defaultCalibMethod = "mse"

// method returns --calib-method.
func (e *extractFlags) method() (backbone.CalibMethod, error) {
	m, err := backbone.ParseCalibMethod(e.calibMethod)
	if err != nil {
		return "", fmt.Errorf("--calib-method: %w", err)
	}
	return m, nil
}

// extractor resolves the flags into the one extractor of the command
// (deploy.ResolveExtractor for a new model: --backbone, --output, --preset,
// --precision; an int8 graph calibrated on split calib of spec), made at
// the first call: one calibration for both splits.
func (e *extractFlags) extractor(cmd *cobra.Command, spec dataset.Spec, calib string) (*extract.Extractor, error) {
	if e.resolved != nil {
		return e.resolved, nil
	}
	prec, err := backbone.ParsePrecision(e.precision)
	if err != nil {
		return nil, fmt.Errorf("--precision: %w", err)
	}
	o := deploy.ExtractorOptions{Spec: e.backbone, Default: extract.DefaultBackbone, Output: e.output, Precision: prec, Decoder: e.decoder(),
		Open: func(s extract.BackboneSpec) (*backbone.Model, error) {
			m, err := openBackboneSpec(s)
			if err != nil {
				return nil, fmt.Errorf("%w (see \"flycl help environment\" for %s)", err, envModels)
			}
			return m, nil
		}}
	if e.preset != "" {
		p, err := transform.LookupPreset(e.preset)
		if err != nil {
			return nil, err
		}
		o.Preset = &p
	}
	if prec == backbone.INT8 {
		if o.Calib.Method, err = e.method(); err != nil {
			return nil, err
		}
		o.Calib.N, o.Calib.Threads = e.calib, e.threads
		o.CalibImages = func() (dataset.Dataset, error) {
			train, _, err := deploy.OpenSplit(spec, calib)
			return train, err
		}
	}
	ex, err := deploy.ResolveExtractor(cmd.Context(), o)
	if err != nil {
		return nil, err
	}
	ex.CacheDir, ex.BatchSize, ex.Threads = cacheDir(cmd.Flags()), e.batch, e.threads
	e.resolved = ex
	return ex, nil
}

// features extracts (or loads from the cache) one split of the data set
// ("": a split-less folder whole): deploy.ExtractFeatures, through the
// extractor the flags resolve.
func (e *extractFlags) features(cmd *cobra.Command, spec dataset.Spec, split string, quiet bool) (*features.Set, error) {
	if e.maxPixels == 0 {
		return nil, fmt.Errorf("--max-image-pixels 0: give a positive limit, or -1 for none")
	}
	lib, err := ortLibrary(cmd.Flags())
	if err != nil {
		return nil, err
	}
	if err := backbone.Init(lib); err != nil {
		return nil, err
	}
	sp := deploy.SplitOf(split)
	var ex *extract.Extractor
	s, err := deploy.ExtractFeatures(cmd.Context(), spec, sp, e.decoder(), func(skipped []string) (*extract.Extractor, error) {
		if len(skipped) > 0 && !quiet {
			fmt.Fprintf(os.Stderr, "warning: %s %s: skipped %d WebP image(s), which flycl cannot decode as PIL does (first: %s)\n", spec, sp.Name, len(skipped), skipped[0])
		}
		var err error
		if ex, err = e.extractor(cmd, spec, sp.Calib); err != nil {
			return nil, err
		}
		bar := newProgress(quiet, 1000)
		ex.Progress = func(done, total int, rate float64) {
			bar.update(done, total, fmt.Sprintf("extract %s %s (%.1f images/s)", ex.Backbone.Name, sp.Name, rate))
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

// extractOptions are flycl extract's flags.
type extractOptions struct {
	e    extractFlags
	data dataFlags
	out  string
}

// AddFlags adds extract's flags to c.
func (o *extractOptions) AddFlags(c *cobra.Command) {
	o.e.register(c)
	c.Flags().StringVar(&o.data.data, "data", "", "data set as kind:path")
	c.Flags().StringVar(&o.out, "out", "out/features", "output directory")
	c.Flags().BoolVar(&o.e.quiet, "quiet", false, "print nothing but errors")
}

func extractCmd() *cobra.Command {
	var o extractOptions
	c := &cobra.Command{
		Use:   "extract",
		Short: "Extract backbone features of a data set into train.npz and test.npz",
		Long: `Decodes and preprocesses every image of both splits exactly as PIL/torchvision
would, runs the backbone on ONNX Runtime, and writes --out/train.npz and
--out/test.npz (a folder without train/ and test/ sub-folders, DIR/<class>/<image>,
is one set of images and gives train.npz alone) (features, labels, paths, class_names, extract_seconds, and
pipeline: the backbone's identity as a model file records it: spec, weights
SHA-256, output, transform, precision and int8 calibration, which flycl
learn, predict and stats --features check against the model's).
Results are cached under --cache keyed by weights, transform, data and split,
so a second run is instant; an interrupted run resumes from its last chunk.

Data sets (--data): ` + strings.Join(dataset.Kinds, ", ") + ` as kind:path.`,
		Example: `  flycl extract --data folder:../shared/data/cifar10-jpeg.tar.gz --backbone mobilenetv2 --out out/c10-mnv2
  flycl extract --data cifar100:cifar-100-python.tar.gz --backbone vit:vit_base_patch16_224.safetensors --preset flycl-cifar`,
		RunE: o.run,
	}
	o.AddFlags(c)
	return c
}

// run extracts every split the data set has (deploy.ExtractSplits) into
// its feature file.
func (o *extractOptions) run(cmd *cobra.Command, args []string) error {
	if o.data.data == "" {
		return fmt.Errorf("give --data")
	}
	if o.e.backbone == "" {
		o.e.backbone = extract.DefaultBackbone
	}
	spec, err := o.data.spec()
	if err != nil {
		return err
	}
	if err := checkOut(o.out); err != nil {
		return err
	}
	splits := deploy.ExtractSplits(spec)
	for _, sp := range splits {
		s, err := o.e.features(cmd, spec, sp.Split, o.e.quiet)
		if err != nil {
			return err
		}
		if err := features.Save(filepath.Join(o.out, sp.File), s); err != nil {
			return err
		}
		if len(splits) == 1 && !o.e.quiet {
			fmt.Fprintf(os.Stderr, "wrote %s/train.npz: %s has no train/ or test/ sub-folder, so its %d images (DIR/<class>/<image>) are one set and there is no test.npz\n", o.out, spec.Path, s.N)
			return nil
		}
	}
	if !o.e.quiet {
		fmt.Fprintf(os.Stderr, "wrote %s/{train,test}.npz\n", o.out)
	}
	return nil
}
