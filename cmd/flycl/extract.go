package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/flycl/flycl/backbone"
	"github.com/flycl/flycl/dataset"
	"github.com/flycl/flycl/extract"
	"github.com/flycl/flycl/features"
	"github.com/flycl/flycl/transform"
)

// extractFlags select a data set and a backbone.
type extractFlags struct {
	backbone, preset, cache, ortLib string
	output                          string
	batch, threads                  int
	quiet                           bool
}

func (e *extractFlags) register(c *cobra.Command) {
	fs := c.Flags()
	fs.StringVar(&e.backbone, "backbone", "", "backbone: "+strings.Join(extract.Backbones, ", "))
	fs.StringVar(&e.preset, "preset", "", "transform preset (default: the backbone's): "+strings.Join(transform.PresetNames(), ", "))
	fs.StringVar(&e.cache, "cache", ".cache/features", "feature cache directory (\"\" disables caching and resuming)")
	fs.StringVar(&e.ortLib, "ort-lib", "", "path to libonnxruntime.so (default: $"+backbone.LibraryEnv+" or .cache/onnxruntime)")
	fs.StringVar(&e.output, "output", "features", "backbone output to extract: features, logits, or blocks (ViT: LayerNorm of the mean CLS over blocks, F-OAL's feature)")
	fs.IntVar(&e.batch, "batch", 32, "images per inference batch")
	fs.IntVar(&e.threads, "threads", 0, "ONNX Runtime threads (0: all CPUs)")
}

// features extracts (or loads from the cache) one split.
func (e *extractFlags) features(cmd *cobra.Command, dataSpec, split string, quiet bool) (*features.Set, error) {
	if err := backbone.Init(e.ortLib); err != nil {
		return nil, err
	}
	ds, err := dataset.Open(dataSpec, split)
	if err != nil {
		return nil, err
	}
	m, err := extract.OpenBackbone(e.backbone)
	if err != nil {
		return nil, err
	}
	preset := m.Preset
	if e.preset != "" {
		if preset, err = transform.LookupPreset(e.preset); err != nil {
			return nil, err
		}
	}
	out, err := m.OutputIndex(e.output)
	if err != nil {
		return nil, err
	}
	job := &extract.Job{Data: ds, DataKey: extract.DataKey(dataSpec, split), Model: m, Preset: preset, Output: out,
		CacheDir: e.cache, BatchSize: e.batch, Threads: e.threads}
	if !quiet {
		var bar *progressbar.ProgressBar
		tty := term.IsTerminal(int(os.Stderr.Fd()))
		last := 0
		job.Progress = func(done, total int, rate float64) {
			if !tty {
				if done-last >= 1000 || done == total {
					fmt.Fprintf(os.Stderr, "extract %s %s: %d/%d images, %.1f images/s\n", m.Name, split, done, total, rate)
					last = done
				}
				return
			}
			if bar == nil {
				bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(os.Stderr), progressbar.OptionShowCount(),
					progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish(),
					progressbar.OptionSetDescription(fmt.Sprintf("extract %s %s", m.Name, split)))
			}
			bar.Describe(fmt.Sprintf("extract %s %s (%.1f img/s)", m.Name, split, rate))
			bar.Set(done)
		}
	}
	s, cached, err := extract.Run(cmd.Context(), job)
	if err != nil {
		return nil, err
	}
	if !quiet {
		if cached {
			fmt.Fprintf(os.Stderr, "extract %s %s: %d features from the cache %s\n", m.Name, split, s.N, job.CachePath())
		} else {
			fmt.Fprintf(os.Stderr, "extract %s %s: %d images in %.1fs (%.1f images/s)\n", m.Name, split, s.N, s.ExtractSeconds, float64(s.N)/s.ExtractSeconds)
		}
	}
	return s, nil
}

func extractCmd() *cobra.Command {
	var e extractFlags
	var data, out string
	c := &cobra.Command{
		Use:   "extract",
		Short: "Extract backbone features of a data set into train.npz and test.npz",
		Long: `Decodes and preprocesses every image of both splits exactly as PIL/torchvision
would, runs the backbone on ONNX Runtime, and writes --out/train.npz and
--out/test.npz (features, labels, paths, class_names, extract_seconds).
Results are cached under --cache keyed by weights, transform, data and split,
so a second run is instant; an interrupted run resumes from its last chunk.

Data sets (--data): ` + strings.Join(dataset.Kinds, ", ") + ` as kind:path.`,
		Example: `  flycl extract --data folder:../shared/data/cifar10-jpeg.tar.gz --backbone mobilenetv2 --out out/c10-mnv2
  flycl extract --data cifar100:cifar-100-python.tar.gz --backbone vit:vit_base_patch16_224.safetensors --preset flycl-cifar`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if data == "" || e.backbone == "" {
				return fmt.Errorf("give --data and --backbone")
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			for _, split := range []string{"train", "test"} {
				s, err := e.features(cmd, data, split, e.quiet)
				if err != nil {
					return err
				}
				if err := features.Save(filepath.Join(out, split+".npz"), s); err != nil {
					return err
				}
			}
			fmt.Fprintf(os.Stderr, "wrote %s/{train,test}.npz\n", out)
			return nil
		},
	}
	e.register(c)
	c.Flags().StringVar(&data, "data", "", "data set as kind:path")
	c.Flags().StringVar(&out, "out", "out/features", "output directory")
	c.Flags().BoolVar(&e.quiet, "quiet", false, "no progress output")
	return c
}
