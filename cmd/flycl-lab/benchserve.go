package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/cmd/internal/cli"
	"github.com/flycl/flycl/lab/bench"
)

// benchServeCmd measures flycl serve on loopback: single-image predict
// latency next to the bare backbone, feature-vector predicts per second,
// and predict latency while learns run.
func benchServeCmd() *cobra.Command {
	var cpuprofile string
	var ortSpin bool
	var spec, images string
	var n, learns int
	var clients []int
	var seconds float64
	var mf cli.ModelFlags
	c := &cobra.Command{
		Use:   "serve --images DIR [--backbone squeezenet]",
		Short: "Predict latency of flycl serve next to the bare backbone, feature predicts/s, predict latency during learns (loopback)",
		Long: `Starts the server in this process on 127.0.0.1 (a temporary model file) and
measures, in one run:

  1. single-image predict (multipart JPEG over HTTP: decode, preprocess,
     backbone, Fly-CL, JSON) p50/p99, next to the bare backbone for one
     image in this process (decode + preprocess + ONNX Runtime run, and the
     run alone), and the ratio (target: p50 within 1.2x);
  2. predicts per second on feature vectors (JSON, one vector per request,
     --seconds with each number of concurrent clients of --clients; target
     >= 2000/s on 2 cores), with the CPU time per request and how many
     requests the server scored together per batch;
  3. feature-predict p99 while --learns learns run one after another,
     next to the idle p99 (the first --clients), and how many predicts
     failed (target: none).

Everything is bounded: --n requests for 1, --seconds for 2, --learns for 3.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cli.InitORT(cmd.Flags()); err != nil {
				return err
			}
			cfg, err := mf.Config()
			if err != nil {
				return err
			}
			if cpuprofile != "" {
				f, err := os.Create(cpuprofile)
				if err != nil {
					return fmt.Errorf("--cpuprofile: %w", err)
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return fmt.Errorf("--cpuprofile: %w", err)
				}
				defer pprof.StopCPUProfile()
			}
			if len(clients) == 0 || slices.Min(clients) < 1 {
				return fmt.Errorf("--clients %v: want one or more counts >= 1", clients)
			}
			if images == "" {
				return fmt.Errorf("give --images DIR, a folder of JPEG images (the repository's benchmarks use ../shared/data/imagenet-sample-500)")
			}
			files, err := bench.ServeImages(images)
			if err != nil {
				return err
			}
			bb, err := cli.OpenBackbone(spec)
			if err != nil {
				return err
			}
			return bench.Serve(cmd.Context(), os.Stdout, bench.ServeOptions{Backbone: bb, Spec: spec, Images: files, Config: cfg,
				N: n, Clients: clients, Learns: learns, Duration: time.Duration(seconds * float64(time.Second)), NoSpin: !ortSpin})
		},
	}
	fs := c.Flags()
	fs.StringVar(&spec, "backbone", "squeezenet", "backbone")
	fs.StringVar(&images, "images", "", "folder of JPEG images (required)")
	fs.IntVar(&n, "n", 100, "single-image predicts (and bare backbone runs)")
	fs.IntSliceVar(&clients, "clients", []int{4, 16}, "concurrent clients for feature predicts (a list: one measurement each; the first also runs during learns)")
	fs.IntVar(&learns, "learns", 3, "learns run while predicting")
	fs.Float64Var(&seconds, "seconds", 5, "seconds of feature predicts")
	fs.BoolVar(&ortSpin, "ort-spin", true, "let ONNX Runtime's idle threads spin (its default), in the server's session and the bare backbone's alike; false: they sleep")
	fs.StringVar(&cpuprofile, "cpuprofile", "", "write a CPU profile of the whole benchmark to this file (go tool pprof)")
	fs.String("ort-lib", "", "path to libonnxruntime.so (default $"+cli.EnvORTLib+", else where scripts/install-deps puts it; see flycl help environment)")
	mf.Register(fs)
	return c
}
