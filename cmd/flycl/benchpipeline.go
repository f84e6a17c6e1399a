package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/backbone"
	"github.com/flycl/flycl/extract"
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
			lib, err := ortLibrary(cmd.Flags())
			if err != nil {
				return err
			}
			if err := backbone.Init(lib); err != nil {
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
			fmt.Printf("ONNX Runtime %s, %d model threads, %d decoding workers, batch %d, %d images of %s %s; spinning %v\n\n",
				backbone.Version(), threads, workers, batch, images, data.data, split, spin)
			fmt.Println("| backbone | precision | decode (images/s) | model | end to end | end to end / min | shared-CPU ceiling | end to end / ceiling |")
			fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|")
			for _, name := range strings.Split(which, ",") {
				m, err := openBackbone(strings.TrimSpace(name))
				if err != nil {
					return fmt.Errorf("--backbones %s: %w", name, err)
				}
				for _, p := range strings.Split(precisions, ",") {
					pr, err := backbone.ParsePrecision(strings.TrimSpace(p))
					if err != nil {
						return fmt.Errorf("--precision: %w", err)
					}
					mm := m
					if pr == backbone.INT8 {
						if mm, err = extract.Int8(cmd.Context(), m, calibSet, m.Preset, backbone.CalibMethod(defaultCalibMethod), calib, threads); err != nil {
							return err
						}
					}
					r, err := extract.MeasurePipeline(cmd.Context(), extract.Job{Data: ds, Model: mm, Preset: mm.Preset,
						BatchSize: batch, Threads: threads, Workers: workers, Spin: spin}, images)
					if err != nil {
						return err
					}
					fmt.Printf("| %s | %s | %.1f | %.1f | %.1f | **%.2f** | %.1f | %.2f |\n", m.Name, pr, r.Decode, r.Model, r.EndToEnd, r.Ratio(), r.Shared(), r.EndToEnd/r.Shared())
				}
			}
			return nil
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
