package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/backbone"
	"github.com/flycl/flycl/internal/bench"
)

// pipelineCmd is "flycl bench pipeline": extraction's decode and inference
// stages alone and overlapped, per backbone and precision.
func pipelineCmd() *cobra.Command {
	var data dataFlags
	var which, precisions, split string
	var images, batch, threads, workers, calib int
	var spin bool
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
		Example: `  flycl bench pipeline --data folder:../shared/data/cifar10-jpeg.tar.gz --backbones squeezenet,mobilenetv2 --images 512`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if data.data == "" {
				return fmt.Errorf("give --data")
			}
			spec, err := data.spec()
			if err != nil {
				return err
			}
			if err := initORT(cmd.Flags()); err != nil {
				return err
			}
			ds, err := spec.Open(split)
			if err != nil {
				return err
			}
			var calibSet = ds
			if split != "train" {
				if calibSet, err = spec.Open("train"); err != nil {
					return err
				}
			}
			var precs []backbone.Precision
			for _, p := range strings.Split(precisions, ",") {
				pr, err := backbone.ParsePrecision(strings.TrimSpace(p))
				if err != nil {
					return fmt.Errorf("--precision: %w", err)
				}
				precs = append(precs, pr)
			}
			var models []*backbone.Model
			for _, name := range strings.Split(which, ",") {
				m, err := openBackbone(strings.TrimSpace(name))
				if err != nil {
					return fmt.Errorf("--backbones %s: %w", name, err)
				}
				models = append(models, m)
			}
			return bench.Pipeline(cmd.Context(), os.Stdout, bench.PipelineOptions{Data: ds, CalibData: calibSet, Label: data.data + " " + split,
				Backbones: models, Precisions: precs, Images: images, Batch: batch, Threads: threads, Workers: workers,
				Calib: calib, Method: backbone.CalibMethod(defaultCalibMethod), Spin: spin})
		},
	}
	c.Flags().StringVar(&data.data, "data", "", "data set as kind:path")
	c.Flags().StringVar(&split, "split", "test", "split to read")
	c.Flags().StringVar(&which, "backbones", "squeezenet,mobilenetv2", "backbones (as --backbone of extract)")
	c.Flags().StringVar(&precisions, "precision", "fp32,int8", "precisions, side by side")
	c.Flags().IntVar(&images, "images", 512, "images per measurement")
	c.Flags().IntVar(&batch, "batch", 32, "images per inference batch")
	c.Flags().IntVar(&threads, "threads", 0, "ONNX Runtime threads (0: all CPUs)")
	c.Flags().IntVar(&workers, "workers", 0, "decoding goroutines (0: one per CPU)")
	c.Flags().IntVar(&calib, "calib", 64, "int8: calibration images from the training split")
	c.Flags().BoolVar(&spin, "spin", false, "let ONNX Runtime's idle threads spin (faster alone, steals CPU from decoding)")
	c.Flags().String("ort-lib", "", "path to libonnxruntime.so (default $"+envORTLib+", else where scripts/install-deps puts it; see flycl help environment)")
	return c
}
