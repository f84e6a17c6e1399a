package bench

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/flycl/flycl/vision/backbone"
)

// benchTorch is the PyTorch side of Backbones, built into the binary so
// that it runs from any folder (python reads it from stdin).
//
//go:embed bench_torch.py
var benchTorch string

// syntheticImages returns n deterministic pseudo-images (n×3×size×size,
// values of a normalised photo's range), for speed measurements.
func syntheticImages(n, size int) []float32 {
	r := rand.New(rand.NewPCG(uint64(n), uint64(size)))
	x := make([]float32, n*3*size*size)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// Backbone is a backbone to measure, or the error that opening it gave
// (reported and skipped).
type Backbone struct {
	Model *backbone.Model
	Err   error
}

// BackbonesOptions are the inputs of Backbones.
type BackbonesOptions struct {
	Backbones  []Backbone
	Precisions []backbone.Precision // side by side per backbone (int8 calibrated on synthetic images: speed only)
	Batch      int                  // images per batch
	Threads    int                  // ONNX Runtime threads (0: all CPUs)
	Duration   time.Duration        // per measurement
	// Torch is a Python interpreter with torch and torchvision for the
	// side-by-side ("": none).
	Torch string
}

// Backbones measures images/s of each backbone in each precision through
// flycl's Session.Run, through ONNX Runtime alone on the same graph, and
// with Torch through PyTorch on the same architectures, and prints a
// Markdown table of the rates and their ratios to out; skipped backbones
// and PyTorch's messages go to warn. ONNX Runtime must be initialised
// (backbone.Init).
func Backbones(ctx context.Context, out, warn io.Writer, o BackbonesOptions) error {
	batch, threads, torch, dur, precs, models := o.Batch, o.Threads, o.Torch, o.Duration, o.Precisions, o.Backbones
	seconds := dur.Seconds()
	var err error
	torchRates := map[string]float64{}
	torchVersion := ""
	if torch != "" {
		py := exec.Command(torch, "-", strconv.Itoa(batch), strconv.Itoa(max(threads, runtime.NumCPU())), fmt.Sprint(seconds))
		py.Stdin, py.Stderr = strings.NewReader(benchTorch), warn
		out, err := py.Output()
		if err != nil {
			return fmt.Errorf("PyTorch benchmark (%s): %w", torch, err)
		}
		var res map[string]any
		if err := json.Unmarshal(out, &res); err != nil {
			return fmt.Errorf("PyTorch benchmark output: %w", err)
		}
		for k, val := range res {
			if f, ok := val.(float64); ok {
				torchRates[k] = f
			}
		}
		torchVersion = fmt.Sprint(res["torch"])
	}
	fmt.Fprintf(out, "ONNX Runtime %s, %d threads, batch %d, %.0f s per measurement; PyTorch %s\n\n", backbone.Version(), max(threads, runtime.NumCPU()), batch, seconds, torchVersion)
	fmt.Fprintln(out, "| backbone | precision | flycl (images/s) | ONNX Runtime alone | flycl / ORT | int8 / fp32 | PyTorch | flycl / PyTorch |")
	fmt.Fprintln(out, "|---|---|---:|---:|---:|---:|---:|---:|")
	for _, e := range models {
		if e.Err != nil {
			fmt.Fprintf(warn, "skip: %v\n", e.Err)
			continue
		}
		var fp32Rate float64
		for _, p := range precs {
			m := e.Model
			if p == backbone.INT8 {
				// speed only: calibrate on 8 synthetic images
				x := syntheticImages(8, m.Size)
				if m, err = e.Model.Int8(ctx, backbone.CalibMinMax, x, 8, threads); err != nil {
					return err
				}
			}
			s, err := m.NewSession(threads)
			if err != nil {
				return err
			}
			ours, err := backbone.Throughput(s, batch, dur)
			s.Close()
			if err != nil {
				return err
			}
			raw, err := backbone.RawThroughput(m, batch, threads, dur)
			if err != nil {
				return err
			}
			speedup := "1"
			if p == backbone.FP32 {
				fp32Rate = ours
			} else if fp32Rate > 0 {
				speedup = fmt.Sprintf("**%.2f**", ours/fp32Rate)
			} else {
				speedup = "n/a"
			}
			tr, tcol, ratio := torchRates[e.Model.Name], "n/a", "n/a"
			if tr > 0 && p == backbone.FP32 {
				tcol, ratio = fmt.Sprintf("%.1f", tr), fmt.Sprintf("%.2f", ours/tr)
			}
			fmt.Fprintf(out, "| %s | %s | %.1f | %.1f | %.2f | %s | %s | %s |\n", e.Model.Name, p, ours, raw, ours/raw, speedup, tcol, ratio)
		}
	}
	return nil
}
