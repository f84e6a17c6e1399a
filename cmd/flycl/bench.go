package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/backbone"
	"github.com/flycl/flycl/imageio"
	"github.com/flycl/flycl/internal/enginebench"
	"github.com/flycl/flycl/linalg"
	"github.com/flycl/flycl/ridge"
	"github.com/spf13/cobra"
)

// lookupScale returns the named synthetic scale of enginebench.
func lookupScale(name string) (enginebench.Scale, error) {
	sc, ok := enginebench.Scales[name]
	if !ok {
		var names []string
		for k := range enginebench.Scales {
			names = append(names, k)
		}
		sort.Strings(names)
		return sc, fmt.Errorf("--scale %q: unknown (want %s)", name, strings.Join(names, " or "))
	}
	return sc, nil
}

func benchCmd() *cobra.Command {
	c := &cobra.Command{Use: "bench", Short: "Measure the engine and its parts on this machine"}
	var scale, gcv string
	var tasks, floorRuns int
	cfg := flycl.DefaultConfig()
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
			sc, err := lookupScale(scale)
			if err != nil {
				return err
			}
			if tasks < 0 {
				return fmt.Errorf("--tasks %d: must be at least 1 (or 0 for the scale's)", tasks)
			}
			if tasks > 0 {
				sc.Tasks = tasks
			}
			if cfg.M < 1 || cfg.P < 1 || cfg.K < 1 || cfg.K > cfg.M {
				return fmt.Errorf("--m %d --p %d --k %d: each must be at least 1, and k at most m", cfg.M, cfg.P, cfg.K)
			}
			if cfg.GCV, err = ridge.ParseGCVMethod(gcv); err != nil {
				return fmt.Errorf("--gcv %q: %w", gcv, err)
			}
			if err := cfg.Validate(sc.Dim); err != nil {
				return err
			}
			res, err := enginebench.Run(cmd.Context(), sc, cfg, floorRuns, os.Stderr)
			if err != nil {
				return err
			}
			res.Report(os.Stdout)
			return nil
		},
	}
	eng.Flags().StringVar(&scale, "scale", "cub", "cifar100, cub or cifar10")
	eng.Flags().Float64SliceVar(&cfg.Lambdas, "lambdas", cfg.Lambdas, "GCV grid")
	eng.Flags().StringVar(&gcv, "gcv", cfg.GCV.String(), "GCV method: auto, dual, primal, eigen, band")
	eng.Flags().IntVar(&tasks, "tasks", 0, "number of tasks (default: the scale's)")
	eng.Flags().IntVar(&floorRuns, "floor-runs", 3, "times the floor is measured (median)")
	eng.Flags().IntVar(&cfg.M, "m", cfg.M, "expansion dimension")
	eng.Flags().IntVar(&cfg.P, "p", cfg.P, "non-zeros per row of W")
	eng.Flags().IntVar(&cfg.K, "k", cfg.K, "top-k")
	c.AddCommand(eng, backbonesCmd(), componentsCmd(), pipelineCmd(), benchServeCmd(), benchServeLearnCmd(), benchUnknownCmd(), benchLearnUpdateCmd())
	return c
}

// benchTorch is the PyTorch side of "flycl bench backbones", built into the
// binary so that it runs from any folder (python reads it from stdin).
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

func backbonesCmd() *cobra.Command {
	var batch, threads int
	var seconds float64
	var torch, precisions, which string
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
		RunE: func(cmd *cobra.Command, args []string) error {
			lib, err := ortLibrary(cmd.Flags())
			if err != nil {
				return err
			}
			if err := backbone.Init(lib); err != nil {
				return err
			}
			dur := time.Duration(seconds * float64(time.Second))
			var precs []backbone.Precision
			for _, p := range strings.Split(precisions, ",") {
				pr, err := backbone.ParsePrecision(strings.TrimSpace(p))
				if err != nil {
					return fmt.Errorf("--precision: %w", err)
				}
				precs = append(precs, pr)
			}
			type entry struct {
				m   *backbone.Model
				err error
			}
			var models []entry
			for _, name := range strings.Split(which, ",") {
				var m *backbone.Model
				var err error
				switch strings.TrimSpace(name) {
				case "squeezenet", "mobilenetv2":
					m, err = openBackbone(name)
				case "resnet50":
					m, err = backbone.ResNet50(backbone.RandomResNet50(1))
				case "vit":
					m, err = backbone.ViT(backbone.RandomViTB16(1), 12)
				default:
					err = fmt.Errorf("--backbones: unknown %q (squeezenet, mobilenetv2, resnet50, vit)", name)
				}
				models = append(models, entry{m, err})
			}
			torchRates := map[string]float64{}
			torchVersion := ""
			if torch != "" {
				py := exec.Command(torch, "-", strconv.Itoa(batch), strconv.Itoa(max(threads, runtime.NumCPU())), fmt.Sprint(seconds))
				py.Stdin, py.Stderr = strings.NewReader(benchTorch), os.Stderr
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
			fmt.Printf("ONNX Runtime %s, %d threads, batch %d, %.0f s per measurement; PyTorch %s\n\n", backbone.Version(), max(threads, runtime.NumCPU()), batch, seconds, torchVersion)
			fmt.Println("| backbone | precision | flycl (images/s) | ONNX Runtime alone | flycl / ORT | int8 / fp32 | PyTorch | flycl / PyTorch |")
			fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|")
			for _, e := range models {
				if e.err != nil {
					fmt.Fprintf(os.Stderr, "skip: %v\n", e.err)
					continue
				}
				var fp32Rate float64
				for _, p := range precs {
					m := e.m
					if p == backbone.INT8 {
						// speed only: calibrate on 8 synthetic images
						x := syntheticImages(8, m.Size)
						if m, err = e.m.Int8(cmd.Context(), backbone.CalibMinMax, x, 8, threads); err != nil {
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
					tr, tcol, ratio := torchRates[e.m.Name], "n/a", "n/a"
					if tr > 0 && p == backbone.FP32 {
						tcol, ratio = fmt.Sprintf("%.1f", tr), fmt.Sprintf("%.2f", ours/tr)
					}
					fmt.Printf("| %s | %s | %.1f | %.1f | %.2f | %s | %s | %s |\n", e.m.Name, p, ours, raw, ours/raw, speedup, tcol, ratio)
				}
			}
			return nil
		},
	}
	c.Flags().IntVar(&batch, "batch", 8, "images per batch")
	c.Flags().IntVar(&threads, "threads", 0, "threads (0: all CPUs)")
	c.Flags().Float64Var(&seconds, "seconds", 5, "seconds per measurement")
	c.Flags().StringVar(&precisions, "precision", "fp32,int8", "precisions to measure, side by side per backbone (int8 calibrated on synthetic images: speed only)")
	c.Flags().StringVar(&which, "backbones", "squeezenet,mobilenetv2,resnet50,vit", "backbones to measure")
	c.Flags().StringVar(&torch, "torch", "", "Python interpreter with torch and torchvision for the side-by-side (e.g. /usr/bin/python3)")
	c.Flags().String("ort-lib", "", "path to libonnxruntime.so (default $"+envORTLib+", else where scripts/install-deps puts it; see flycl help environment)")
	return c
}

func infoCmd() *cobra.Command {
	var model string
	c := &cobra.Command{
		Use:   "info [FILE | --model FILE]",
		Short: "Print the build's linear-algebra backend and threads, or a model file's configuration and history",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if model != "" && model != args[0] {
					return fmt.Errorf("info: two model files given (%s and --model %s): give one", args[0], model)
				}
				model = args[0]
			}
			if model != "" {
				return printModelInfo(os.Stdout, model)
			}
			fmt.Printf("linalg backend: %s, %d threads; GOMAXPROCS %d; %s/%s\n",
				linalg.Backend(), linalg.Threads(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
			fmt.Printf("JPEG decoder: %s\n", imageio.JPEGDecoder)
			for _, v := range []string{"OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OPENBLAS_L2_SIZE"} {
				if s, ok := os.LookupEnv(v); ok {
					fmt.Printf("%s=%s\n", v, s)
				}
			}
			return nil
		},
	}
	c.Flags().StringVar(&model, "model", "", "model file to describe (config, version, classes, lambda history, size)")
	return c
}
