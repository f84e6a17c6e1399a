package bench

import (
	"context"
	"fmt"
	"io"

	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/extract"
)

// PipelineOptions are the inputs of Pipeline.
type PipelineOptions struct {
	Data       dataset.Dataset // the images measured (the first Images of them)
	CalibData  dataset.Dataset // the training images int8 backbones are calibrated on
	Label      string          // describes Data in the header (as the user named it, and the split)
	Backbones  []*backbone.Model
	Precisions []backbone.Precision // side by side per backbone
	Images     int                  // images per measurement
	Batch      int                  // images per inference batch
	Threads    int                  // ONNX Runtime threads (0: all CPUs)
	Workers    int                  // decoding goroutines (0: one per CPU)
	Calib      int                  // int8: calibration images
	Method     backbone.CalibMethod // int8: how activation ranges are chosen
	Spin       bool                 // ONNX Runtime's idle threads spin
}

// Pipeline measures extraction's stages (extract.MeasurePipeline): decode
// alone, the model alone and end to end, per backbone and precision, and
// prints a Markdown table with end to end / min(decode, model) and the
// shared-CPU ceiling 1/(1/decode + 1/model). ONNX Runtime must be
// initialised (backbone.Init).
func Pipeline(ctx context.Context, out io.Writer, o PipelineOptions) error {
	fmt.Fprintf(out, "ONNX Runtime %s, %d model threads, %d decoding workers, batch %d, %d images of %s; spinning %v\n\n",
		backbone.Version(), o.Threads, o.Workers, o.Batch, o.Images, o.Label, o.Spin)
	fmt.Fprintln(out, "| backbone | precision | decode (images/s) | model | end to end | end to end / min | shared-CPU ceiling | end to end / ceiling |")
	fmt.Fprintln(out, "|---|---|---:|---:|---:|---:|---:|---:|")
	for _, m := range o.Backbones {
		for _, pr := range o.Precisions {
			mm := m
			if pr == backbone.INT8 {
				var err error
				if mm, err = extract.Int8(ctx, m, o.CalibData, m.Preset, o.Method, o.Calib, o.Threads); err != nil {
					return err
				}
			}
			r, err := extract.MeasurePipeline(ctx, extract.Job{Data: o.Data, Model: mm, Preset: mm.Preset,
				BatchSize: o.Batch, Threads: o.Threads, Workers: o.Workers, Spin: o.Spin}, o.Images)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "| %s | %s | %.1f | %.1f | %.1f | **%.2f** | %.1f | %.2f |\n", m.Name, pr, r.Decode, r.Model, r.EndToEnd, r.Ratio(), r.Shared(), r.EndToEnd/r.Shared())
		}
	}
	return nil
}
