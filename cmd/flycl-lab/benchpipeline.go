package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/cmd/internal/cli"
	"github.com/flycl/flycl/lab/bench"
	"github.com/flycl/flycl/vision/backbone"
)

// pipelineCmd is "flycl-lab bench pipeline": extraction's decode and inference
// stages alone and overlapped, per backbone and precision.
// pipelineOptions are flycl-lab bench pipeline's flags.
type pipelineOptions struct {
	data                                   cli.DataFlags
	which, precisions, split               string
	images, batch, threads, workers, calib int
	spin                                   bool
}

// AddFlags adds bench pipeline's flags to c.
func (o *pipelineOptions) AddFlags(c *cobra.Command) {
	c.Flags().StringVar(&o.data.Data, "data", "", "data set as kind:path")
	c.Flags().StringVar(&o.split, "split", "test", "split to read")
	c.Flags().StringVar(&o.which, "backbones", "squeezenet,mobilenetv2", "backbones (as --backbone of extract)")
	c.Flags().StringVar(&o.precisions, "precision", "fp32,int8", "precisions, side by side")
	c.Flags().IntVar(&o.images, "images", 512, "images per measurement")
	c.Flags().IntVar(&o.batch, "batch", 32, "images per inference batch")
	c.Flags().IntVar(&o.threads, "threads", 0, "ONNX Runtime threads (0: all CPUs)")
	c.Flags().IntVar(&o.workers, "workers", 0, "decoding goroutines (0: one per CPU)")
	c.Flags().IntVar(&o.calib, "calib", 64, "int8: calibration images from the training split")
	c.Flags().BoolVar(&o.spin, "spin", false, "let ONNX Runtime's idle threads spin (faster alone, steals CPU from decoding)")
	c.Flags().String("ort-lib", "", "path to libonnxruntime.so (default $"+cli.EnvORTLib+", else where scripts/install-deps puts it; see flycl help environment)")
}

func pipelineCmd() *cobra.Command {
	var o pipelineOptions
	c := &cobra.Command{
		Use:   "pipeline",
		Short: "Images/s of decoding alone, the model alone and extraction end to end, per backbone and precision",
		Long: `Measures, in one run, on the first --images images of a data set split:
decode + resize + normalise alone (the worker pool, no inference), the model
alone (the same images preprocessed in memory), and extraction end to end
(workers decoding into a bounded ring of batches while the model runs).
Prints end-to-end / min(decode, model) (1 when the overlap hides the faster
stage), and the shared-CPU ceiling 1/(1/decode + 1/model): when both stages
need all the cores, end to end cannot beat it.`,
		Example: `  flycl-lab bench pipeline --data folder:../shared/data/cifar10-jpeg.tar.gz --backbones squeezenet,mobilenetv2 --images 512`,
		RunE:    o.run,
	}
	o.AddFlags(c)
	return c
}

// run loads ONNX Runtime, opens the data set and the backbones and measures them (bench.Pipeline).
func (o *pipelineOptions) run(cmd *cobra.Command, args []string) error {
	if o.data.Data == "" {
		return fmt.Errorf("give --data")
	}
	spec, err := o.data.Spec()
	if err != nil {
		return err
	}
	if err := cli.InitORT(cmd.Flags()); err != nil {
		return err
	}
	ds, err := spec.Open(o.split)
	if err != nil {
		return err
	}
	var calibSet = ds
	if o.split != "train" {
		if calibSet, err = spec.Open("train"); err != nil {
			return err
		}
	}
	precs, err := bench.ParsePrecisions(o.precisions)
	if err != nil {
		return err
	}
	var models []*backbone.Model
	for _, name := range strings.Split(o.which, ",") {
		m, err := cli.OpenBackbone(strings.TrimSpace(name))
		if err != nil {
			return fmt.Errorf("--backbones %s: %w", name, err)
		}
		models = append(models, m)
	}
	return bench.Pipeline(cmd.Context(), os.Stdout, bench.PipelineOptions{Data: ds, CalibData: calibSet, Label: o.data.Data + " " + o.split,
		Backbones: models, Precisions: precs, Images: o.images, Batch: o.batch, Threads: o.threads, Workers: o.workers,
		Calib: o.calib, Method: backbone.CalibMethod(cli.DefaultCalibMethod), Spin: o.spin})
}
