// Command flycl-beam learns one Fly-CL task on Apache Beam: images of a
// data set (through a backbone) or rows of a feature file are sharded over
// the runner's workers, which extract, expand and sum the training
// statistics per shard; the shards' statistics are added in the fixed
// binary tree flycl merge uses (the same bits on any number of workers);
// a final step verifies that every sample was counted exactly once,
// chooses λ by GCV and writes the model file.
//
//	flycl-beam --data folder:cifar10-jpeg.tar.gz --backbone squeezenet --out m.flycl
//	flycl-beam --features train.npz --out m.flycl --runner=flink --endpoint=localhost:8099
//
// The runner is chosen by Beam's --runner flag (default prism, in this
// process); see docs/SCALE.md for Flink, Spark and Dataflow.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/configflag"
	"github.com/flycl/flycl/app/intake"
	"github.com/flycl/flycl/app/locate"
	"github.com/flycl/flycl/beam/pipeline"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/extract"
)

func main() {
	var (
		data      = flag.String("data", "", "data set spec (e.g. folder:PATH.tar.gz), read by every worker; a path gs://... is copied by each worker through Beam's file systems")
		split     = flag.String("split", "train", "split of --data")
		bb        = backboneFlag(flag.CommandLine)
		modelsDir = flag.String("models-dir", "", "where --backbone squeezenet|mobilenetv2 without a path finds its weights on every worker (default: the weights built into flycl-beam)")
		ortLib    = flag.String("ort-lib", "", "ONNX Runtime library on the workers (default $FLYCL_ORT_LIB, else as flycl finds it: a release archive's lib/, else .cache/onnxruntime/... for this machine's architecture in the current folder or a parent)")
		feats     = flag.String("features", "", "feature file (.npz) instead of --data: a local path, or gs://... through Beam's file systems")
		perClass  = flag.Int("per-class", 0, "use only the first N samples of each class (0: all)")
		shard     = flag.Int("shard-size", 0, "samples per input element (0: max(64, m²/50000), 2000 at m = 10000: each shard ships its own G of 8·m(m+1)/2 bytes)")
		batch     = flag.Int("batch", 32, "images per inference call")
		threads   = flag.Int("threads", 1, "ONNX Runtime and decoding threads per extraction")
		workers   = flag.Int("workers", 0, "concurrent extractions per worker process (0: number of CPUs)")
		blockRows = flag.Int("block-rows", 512, "rows of G per shuffled piece")
		out       = flag.String("out", "", "model file to write: a new local path every worker can write (shared storage; one that exists is refused), or gs://... through Beam's file systems")
		statsOut  = flag.String("stats-out", "", "also write the statistics file (for flycl merge): a local path or gs://...")
		shards    = flag.Int("shards", 0, "cut the samples into exactly this many contiguous shards, as flycl stats --shard i/N does (instead of --shard-size), each its own extraction branch")
		jobPort   = flag.Int("job-service", 0, "serve prism's job service on this port (all interfaces, as the SDK's prism command) until interrupted, instead of learning")
		poolPort  = flag.Int("worker-pool", 0, "serve an external worker pool on localhost:PORT until interrupted, instead of learning: a runner given --environment_type=EXTERNAL --environment_config=localhost:PORT runs its SDK harness in this process")
		pools     = flag.String("worker-pools", "", "comma-separated worker pools (host:port, --worker-pool): submit to the job service at --endpoint with extraction branch i on pool i, summing and the final step on the first")
		compare   = flag.String("compare", "", "compare comma-separated model files bit for bit with the first (λ, GCV, G, S, coefficients, predictions for the rows of --features), instead of learning")
		single    = flag.Bool("single-process", false, "measure instead: extract the same images in this process with the workers' extractor (as flycl extract, --threads threads) and report images/s")
	)
	model := modelFlags(flag.CommandLine)
	flag.Parse()
	beam.Init() // a worker started by the runner never returns from here
	if *jobPort != 0 || *poolPort != 0 {
		if err := serve(*jobPort, *poolPort); err != nil {
			log.Fatalf("flycl-beam: %v", err)
		}
		return
	}
	if *compare != "" {
		same, err := compareModels(strings.Split(*compare, ","), *feats)
		if err != nil {
			log.Fatalf("flycl-beam: %v", err)
		}
		if !same {
			os.Exit(1)
		}
		return
	}
	if *out == "" && *statsOut == "" && !*single {
		log.Fatal("flycl-beam: --out or --stats-out is required")
	}
	lib, err := ortLibrary(*ortLib, *feats == "" && (*data != "" || *single))
	if err != nil {
		log.Fatalf("flycl-beam: %v", err)
	}
	opt := pipeline.Options{Data: *data, Split: *split, Backbone: *bb, ModelsDir: *modelsDir, ORTLib: lib, Features: *feats,
		ShardSize: *shard, Shards: *shards, BatchSize: *batch, Threads: *threads, Workers: *workers, BlockRows: *blockRows,
		Out: *out, StatsOut: *statsOut, FailShard: -1}
	if *feats != "" {
		*data = ""
		opt.Data = ""
	}
	if *perClass > 0 {
		idx, err := pipeline.FirstPerClass(opt, *perClass)
		if err != nil {
			log.Fatal(err)
		}
		opt.Indices = idx
	}
	if *single {
		if err := singleProcess(opt); err != nil {
			log.Fatal(err)
		}
		return
	}
	plan, err := pipeline.MakePlan(opt)
	if err != nil {
		log.Fatal(err)
	}
	if opt.Config, err = launchConfig(model, plan); err != nil {
		log.Fatalf("flycl-beam: %v", err)
	}
	// each of --shards is its own extraction branch (its own bundle, and
	// with --worker-pools branch i runs on pool i mod the pools)
	opt.Branches = *shards
	var workerPools []string
	if *pools != "" {
		workerPools = strings.Split(*pools, ",")
		if *shards == 0 {
			opt.Branches = len(workerPools)
		}
	}
	bp, s := beam.NewPipelineWithRoot()
	pipeline.Build(s, opt, plan)
	start := time.Now()
	var res beam.PipelineResult
	if workerPools != nil {
		endpoint := flag.Lookup("endpoint").Value.String()
		if endpoint == "" {
			log.Fatal("flycl-beam: --worker-pools needs --endpoint (the job service, e.g. localhost:8073)")
		}
		res, err = pipeline.RunOnWorkers(context.Background(), bp, endpoint, workerPools)
	} else {
		res, err = beamx.RunWithMetrics(context.Background(), bp)
	}
	if err != nil {
		log.Fatalf("flycl-beam: %v", err)
	}
	sec := time.Since(start).Seconds()
	if res != nil {
		c := map[string]int64{}
		for _, r := range res.Metrics().AllMetrics().Counters() {
			if r.Key.Namespace == "flycl" {
				c[r.Key.Name] += r.Result()
			}
		}
		busy := float64(c["extract_ms"]+c["expand_accumulate_ms"]) / 1000
		fmt.Printf("workers: %d bundles, %d images, extract %.1f s, expand+accumulate %.1f s, emit %.1f s, final %.1f s (summed over workers): %.1f images/s per busy worker\n",
			c["bundles"], c["images"], float64(c["extract_ms"])/1000, float64(c["expand_accumulate_ms"])/1000, float64(c["emit_ms"])/1000, float64(c["final_ms"])/1000, float64(c["images"])/busy)
	}
	runner := runnerName()
	if workerPools != nil {
		runner = fmt.Sprintf("job service %s, %d worker pools", flag.Lookup("endpoint").Value.String(), len(workerPools))
	}
	fmt.Fprintf(os.Stdout, "beam (%s): learned %d samples in %d shards, workers=%d threads=%d: %.1f s, %.1f samples/s, peak RSS %s\n",
		runner, plan.N, len(plan.Shards), *workers, *threads, sec, float64(plan.N)/sec, peakRSS())
}

// modelFlags registers Fly-CL's hyper-parameters on fs: every field of
// flycl.Config, with its flag, help and default (configflag), as flycl
// learn has them; --seed is the older name of --w-seed.
func modelFlags(fs *flag.FlagSet) *configflag.Flags {
	model := configflag.New()
	model.AddToGo(fs)
	fs.Var(fs.Lookup("w-seed").Value, "seed", "the same as --w-seed (its older name)")
	return model
}

// backboneFlag registers --backbone on fs, defaulting to flycl's
// (extract.DefaultBackbone).
func backboneFlag(fs *flag.FlagSet) *string {
	return fs.String("backbone", extract.DefaultBackbone, "backbone spec for --data (as flycl extract --backbone); squeezenet and mobilenetv2 without a path read --models-dir, else the weights built in; weights at gs://... are copied by each worker through Beam's file systems")
}

// launchConfig is the configuration of the model the pipeline learns
// from the input plan sizes: the one flycl stats and flycl learn give a
// new model for the same input and flags (configflag.Flags.NewModelConfig:
// for images through a backbone, or a feature file recording one, the
// image defaults for every size and λ flag not given; else the flags'),
// so that the statistics of --stats-out merge with flycl stats' shards.
func launchConfig(model *configflag.Flags, plan *pipeline.Plan) (flycl.Config, error) {
	return model.NewModelConfig(plan.Dim, "", plan.Pipeline)
}

// ortLibrary resolves the ONNX Runtime library as flycl does
// (locate.Resolver.ORTLibrary): the flag, else $FLYCL_ORT_LIB, else a
// release archive's lib/, else where make ort installs it (for this
// build's architecture) in this folder or a parent. When none is found it
// is an error if need (images to extract), else "".
func ortLibrary(flagValue string, need bool) (string, error) {
	var r locate.Resolver
	if flagValue != "" {
		r.Flags = map[string]string{locate.FlagORTLib: flagValue}
	}
	lib, err := r.ORTLibrary()
	if err != nil && !need {
		return "", nil
	}
	return lib, err
}

// serve runs the job service or a worker pool until SIGINT or SIGTERM. A
// worker pool then prints what the pipeline did in it (bundles, samples,
// bytes of statistics pieces encoded).
func serve(jobPort, poolPort int) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if jobPort != 0 {
		return pipeline.ServeJobService(ctx, jobPort)
	}
	err := pipeline.ServeWorkerPool(ctx, poolPort)
	ws := pipeline.ProcessWorkerStats()
	fmt.Printf("worker pool localhost:%d: %d bundles, %d samples, %d statistics pieces encoded (%d bytes), peak RSS %s\n",
		poolPort, ws.Bundles, ws.Samples, ws.EncodedPieces, ws.EncodedBytes, peakRSS())
	fmt.Printf("worker pool localhost:%d stages: %s; %d bytes of pieces decoded\n", poolPort, ws.Stages, ws.DecodedBytes)
	return err
}

// compareModels prints how each model compares with the first.
func compareModels(paths []string, featPath string) (bool, error) {
	if len(paths) < 2 {
		return false, fmt.Errorf("--compare needs two model files or more")
	}
	var x []float32
	n := 0
	if featPath != "" {
		fs, err := features.Load(featPath)
		if err != nil {
			return false, err
		}
		x, n = fs.X, fs.N
	}
	ref, err := modelfile.LoadModel(paths[0])
	if err != nil {
		return false, err
	}
	fmt.Printf("%s: λ=%g, %d samples, %d classes\n", paths[0], ref.Lambda(), ref.Samples(), ref.Classes().Len())
	same := true
	for _, p := range paths[1:] {
		m, err := modelfile.LoadModel(p)
		if err != nil {
			return false, err
		}
		d, err := pipeline.DiffModels(context.Background(), ref, m, x)
		if err != nil {
			return false, err
		}
		if len(d) == 0 {
			fmt.Printf("%s: λ=%g, %d samples: bit-identical (λ, GCV, G, S, coefficients, %d predictions)\n", p, m.Lambda(), m.Samples(), n)
		} else {
			same = false
			fmt.Printf("%s: λ=%g, %d samples: DIFFERS in %s\n", p, m.Lambda(), m.Samples(), strings.Join(d, "; "))
		}
	}
	return same, nil
}

func runnerName() string {
	if f := flag.Lookup("runner"); f != nil && f.Value.String() != "" {
		return f.Value.String()
	}
	return "prism"
}

// peakRSS returns this process's peak resident memory (VmHWM), which with
// the in-process prism runner includes every worker.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// singleProcess extracts the selected images in this process with the
// workers' extractor (pipeline.OpenExtractor, through Extractor.Dataset as
// flycl extract) and reports images/s, for comparison with the pipeline.
func singleProcess(opt pipeline.Options) error {
	spec, err := dataset.ParseSpec(opt.Data)
	if err != nil {
		return err
	}
	ds, _, err := intake.OpenData(spec, opt.Split)
	if err != nil {
		return err
	}
	e, done, err := pipeline.OpenExtractor(context.Background(), opt)
	if err != nil {
		return err
	}
	defer done()
	idx := opt.Indices
	if idx == nil {
		idx = make([]int, ds.Len())
		for i := range idx {
			idx[i] = i
		}
	}
	if err := backbone.Init(opt.ORTLib); err != nil {
		return err
	}
	start := time.Now()
	if _, _, err = e.Dataset(context.Background(), dataset.Subset(dataset.WithDecoder(ds, e.Decoder), idx), ""); err != nil {
		return err
	}
	sec := time.Since(start).Seconds()
	fmt.Printf("single process: extracted %d images, threads=%d: %.1f s, %.1f images/s, peak RSS %s\n", len(idx), opt.Threads, sec, float64(len(idx))/sec, peakRSS())
	return nil
}
