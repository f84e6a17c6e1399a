// Command flycl-beam learns one Fly-CL task on Apache Beam: images of a
// data set (through a backbone) or rows of a feature file are sharded over
// the runner's workers, which extract, expand and sum the training
// statistics per bundle; a final step verifies that every sample was
// counted exactly once, chooses λ by GCV and writes the model file.
//
//	flycl-beam --data folder:cifar10-jpeg.tar.gz --backbone squeezenet:DIR --out m.flycl
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
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/beam/pipeline"
)

func main() {
	var (
		data      = flag.String("data", "", "data set spec (e.g. folder:PATH.tar.gz), read by every worker")
		split     = flag.String("split", "train", "split of --data")
		bb        = flag.String("backbone", "squeezenet", "backbone spec for --data (as flycl extract --backbone)")
		feats     = flag.String("features", "", "feature file (.npz) instead of --data")
		perClass  = flag.Int("per-class", 0, "use only the first N samples of each class (0: all)")
		m         = flag.Int("m", 10000, "expansion dimension m")
		p         = flag.Int("p", 300, "non-zeros per row of W")
		k         = flag.Int("k", 3000, "coordinates kept by top-k")
		seed      = flag.Uint64("seed", 0, "seed of W")
		lambdas   = flag.String("lambdas", "1e6,1e7,1e8,1e9", "GCV grid, comma-separated")
		shard     = flag.Int("shard-size", 64, "samples per input element")
		batch     = flag.Int("batch", 32, "images per inference call")
		threads   = flag.Int("threads", 1, "ONNX Runtime and decoding threads per extraction")
		workers   = flag.Int("workers", 0, "concurrent extractions per worker process (0: number of CPUs)")
		blockRows = flag.Int("block-rows", 512, "rows of G per shuffled piece")
		out       = flag.String("out", "", "model file to write (a path every worker can write, e.g. shared storage)")
	)
	flag.Parse()
	beam.Init() // a worker started by the runner never returns from here
	if *out == "" {
		log.Fatal("flycl-beam: --out is required")
	}
	var grid []float64
	for _, s := range strings.Split(*lambdas, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			log.Fatalf("flycl-beam: --lambdas: %v", err)
		}
		grid = append(grid, v)
	}
	opt := pipeline.Options{Data: *data, Split: *split, Backbone: *bb, Features: *feats,
		Config:    flycl.Config{M: *m, P: *p, K: *k, Seed: *seed, Lambdas: grid},
		ShardSize: *shard, BatchSize: *batch, Threads: *threads, Workers: *workers, BlockRows: *blockRows,
		Out: *out, FailShard: -1}
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
	plan, err := pipeline.MakePlan(opt)
	if err != nil {
		log.Fatal(err)
	}
	bp, s := beam.NewPipelineWithRoot()
	pipeline.Build(s, opt, plan)
	start := time.Now()
	if err := beamx.Run(context.Background(), bp); err != nil {
		log.Fatalf("flycl-beam: %v", err)
	}
	sec := time.Since(start).Seconds()
	fmt.Fprintf(os.Stdout, "learned %d samples in %d shards: %.1f s, %.1f samples/s; model %s\n", plan.N, len(plan.Shards), sec, float64(plan.N)/sec, *out)
}
