package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/cmd/internal/cli"
	"github.com/flycl/flycl/lab/bench"
	"github.com/flycl/flycl/lab/enginebench"
	"github.com/flycl/flycl/vision/backbone"
)

func benchCmd() *cobra.Command {
	c := &cobra.Command{Use: "bench", Short: "Measure the engine and its parts on this machine"}
	var floorRuns int
	var o enginebench.Options
	mf := cli.SomeModelFlags(flycl.DefaultConfig(), "M", "P", "K", "Lambdas", "GCV")
	eng := &cobra.Command{
		Use:   "engine",
		Short: "Time every stage of learning synthetic tasks next to the BLAS floor (ssyrk + spotrf)",
		Long: `Learns a synthetic class-incremental stream at one of the paper's scales and
prints, per task, the time of every stage and tau_post divided by the BLAS
floor: a bare ssyrk of the task's codes plus a bare spotrf of the m×m matrix,
measured in the same process afterwards. Also prints the peak RSS.

Scales: cifar100 (10 tasks × 5000 samples × d=768, 10 classes per task),
cub (10 tasks × 600 samples × d=768, 20 classes per task) and cifar10 (5
tasks × 10000 samples × d=768, 2 classes per task: n = m at the default m).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.Config, err = mf.Config(); err != nil {
				return err
			}
			sc, cfg, err := o.Resolve()
			if err != nil {
				return mf.Explain(cfg, err)
			}
			res, err := enginebench.Run(cmd.Context(), sc, cfg, floorRuns, os.Stderr)
			if err != nil {
				return err
			}
			res.Report(os.Stdout)
			return nil
		},
	}
	eng.Flags().StringVar(&o.Scale, "scale", "cub", "cifar100, cub or cifar10")
	eng.Flags().IntVar(&o.Tasks, "tasks", 0, "number of tasks (default: the scale's)")
	eng.Flags().IntVar(&floorRuns, "floor-runs", 3, "times the floor is measured (median)")
	mf.Register(eng.Flags()) // --m --p --k --lambdas --gcv
	c.AddCommand(eng, backbonesCmd(), componentsCmd(), pipelineCmd(), benchServeCmd(), benchServeLearnCmd(), benchUnknownCmd(), benchFewShotCmd(), benchLearnUpdateCmd(), benchDecodeBudgetCmd(), benchCameraCmd(), benchDualCmd(), benchRecipeCmd(), benchVideoFramesCmd(), benchVideoCmd())
	return c
}

// backbonesOptions are flycl-lab bench backbones's flags.
type backbonesOptions struct {
	batch, threads           int
	seconds                  float64
	torch, precisions, which string
}

// AddFlags adds bench backbones's flags to c.
func (o *backbonesOptions) AddFlags(c *cobra.Command) {
	c.Flags().IntVar(&o.batch, "batch", 8, "images per batch")
	c.Flags().IntVar(&o.threads, "threads", 0, "threads (0: all CPUs)")
	c.Flags().Float64Var(&o.seconds, "seconds", 5, "seconds per measurement")
	c.Flags().StringVar(&o.precisions, "precision", "fp32,int8", "precisions to measure, side by side per backbone (int8 calibrated on synthetic images: speed only)")
	c.Flags().StringVar(&o.which, "backbones", "squeezenet,mobilenetv2,resnet50,vit", "backbones to measure")
	c.Flags().StringVar(&o.torch, "torch", "", "Python interpreter with torch and torchvision for the side-by-side (e.g. /usr/bin/python3)")
	c.Flags().String("ort-lib", "", "path to libonnxruntime.so (default $"+cli.EnvORTLib+", else where scripts/install-deps puts it; see flycl help environment)")
}

func backbonesCmd() *cobra.Command {
	var o backbonesOptions
	c := &cobra.Command{
		Use:   "backbones",
		Short: "Images/s of SqueezeNet, MobileNetV2, ResNet-50 and ViT-B/16 on ONNX Runtime, next to ORT alone and PyTorch",
		Long: `Measures, in one run on this machine, images/s of each backbone, fp32 and int8
side by side (--precision; see flycl help extract), (batch
--batch, random weights for ResNet-50 and ViT-B/16, the real .npy weights of
$FLYCL_MODELS for the others; see flycl help environment): through flycl's
Session.Run, through ONNX Runtime alone on the same graph (pre-allocated
tensors, no Go work per call), and, when --torch names a Python with torch
and torchvision, PyTorch on the same architectures (a script built into the
binary). Prints the ratios.`,
		RunE: o.run,
	}
	o.AddFlags(c)
	return c
}

// run loads ONNX Runtime, opens the backbones (real weights for SqueezeNet and MobileNetV2, random ones for ResNet-50 and ViT-B/16: speed only) and measures them (bench.Backbones).
func (o *backbonesOptions) run(cmd *cobra.Command, args []string) error {
	if err := cli.InitORT(cmd.Flags()); err != nil {
		return err
	}
	dur := time.Duration(o.seconds * float64(time.Second))
	precs, err := bench.ParsePrecisions(o.precisions)
	if err != nil {
		return err
	}
	var models []bench.Backbone
	for _, name := range strings.Split(o.which, ",") {
		var m *backbone.Model
		var err error
		switch strings.TrimSpace(name) {
		case "squeezenet", "mobilenetv2":
			m, err = cli.OpenBackbone(name)
		case "resnet50":
			m, err = backbone.ResNet50(backbone.RandomResNet50(1))
		case "vit":
			m, err = backbone.ViT(backbone.RandomViTB16(1), 12)
		default:
			err = fmt.Errorf("--backbones: unknown %q (squeezenet, mobilenetv2, resnet50, vit)", name)
		}
		models = append(models, bench.Backbone{Model: m, Err: err})
	}
	return bench.Backbones(cmd.Context(), os.Stdout, os.Stderr, bench.BackbonesOptions{Backbones: models, Precisions: precs,
		Batch: o.batch, Threads: o.threads, Duration: dur, Torch: o.torch})
}
