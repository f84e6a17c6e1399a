package pipeline

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/testimages"
	"github.com/flycl/flycl/ridge"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/backbone/zoo"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/extract"
)

// TestWorkersExtractLikeFlycl: the workers extract images with the one
// extractor type, extract.Extractor (OpenExtractor, held by the DoFn from
// Setup to Teardown), so the pipeline's features and statistics are those
// of flycl extract and flycl stats. On 12 drawn images through SqueezeNet
// with the weights built into flycl (no models folder): the plan records
// the extractor's pipeline and dimension; the DoFn's features are
// Extractor.Dataset's (the path of flycl extract and learn) bit for bit,
// and so is the statistics file's G and S (Model.TaskStats of each batch
// of 4 of those features, merged in order: the pipeline's batches and
// order of adding). Needs ONNX Runtime.
func TestWorkersExtractLikeFlycl(t *testing.T) {
	if err := backbone.Init(testLibrary()); err != nil {
		t.Skipf("ONNX Runtime not available: %v", err)
	}
	dir := t.TempDir()
	local := filepath.Join(dir, "images")
	if _, err := testimages.WriteFolder(filepath.Join(local, "train"), []string{"discs", "stripes", "checks"}, 4, 40, "jpg", rand.New(rand.NewPCG(5, 6))); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ds, err := dataset.Open("folder:"+local, "train")
	if err != nil {
		t.Fatal(err)
	}
	// the reference: flycl's extractor of the built-in SqueezeNet
	bb, err := extract.OpenBackboneFS("squeezenet", zoo.FS(), "built-in")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := extract.NewExtractor(bb, "squeezenet", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ref.BatchSize = 4
	want, _, err := ref.Dataset(ctx, ds, "")
	if err != nil {
		t.Fatal(err)
	}

	cfg := flycl.Config{M: 400, P: 50, K: 100, Seed: 3, Lambdas: []float64{1, 10, 100}}
	opt := Options{Data: "folder:" + local, Split: "train", Backbone: "squeezenet", ORTLib: testLibrary(), Config: cfg,
		ShardSize: 64, BatchSize: 4, BlockRows: 100, FailShard: -1, StatsOut: filepath.Join(dir, "beam.stats")}
	plan, err := MakePlan(opt)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Dim != ref.Dim() || !reflect.DeepEqual(plan.Pipeline, ref.Pipeline()) {
		t.Fatalf("plan: d=%d pipeline %+v, want the extractor's d=%d %+v", plan.Dim, plan.Pipeline, ref.Dim(), ref.Pipeline())
	}

	// the DoFn's features, directly
	fn := &extractFn{Opt: opt, Dim: plan.Dim, Leaves: len(plan.Shards)}
	fn.Opt.defaults()
	if err := fn.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if fn.ext == nil || !reflect.DeepEqual(fn.ext.Pipeline(), ref.Pipeline()) {
		t.Fatalf("the DoFn holds no extractor of the plan's pipeline")
	}
	x, labels, err := fn.features(ctx, plan.Shards[0].Indices)
	if err != nil {
		t.Fatal(err)
	}
	if err := fn.Teardown(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x, want.X) || !slices.Equal(labels, want.Labels) {
		t.Errorf("the DoFn's features (%d values, labels %v) differ from Extractor.Dataset's (labels %v)", len(x), labels, want.Labels)
	}

	// the pipeline's statistics
	p, s := beam.NewPipelineWithRoot()
	Build(s, opt, plan)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	sf, err := modelfile.LoadStats(opt.StatsOut)
	if err != nil {
		t.Fatal(err)
	}
	m, err := flycl.New(cfg, want.D)
	if err != nil {
		t.Fatal(err)
	}
	// the pipeline sums each batch's G (one product of the batch's codes)
	// into its accumulator, batch after batch: TaskStats of each batch of
	// opt.BatchSize samples, merged in the same order, adds the same
	// float64 terms in the same order (TaskStats of all 12 at once would
	// form one product of 12 rows, whose sums may round otherwise)
	st, err := ridge.NewStats(cfg.M)
	if err != nil {
		t.Fatal(err)
	}
	for lo := 0; lo < want.N; lo += opt.BatchSize {
		hi := min(want.N, lo+opt.BatchSize)
		b, err := m.TaskStats(ctx, want.X[lo*want.D:hi*want.D], want.Labels[lo:hi])
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Merge(b); err != nil {
			t.Fatal(err)
		}
	}
	compareStats(t, st, sf.Stats, 0)
	if !reflect.DeepEqual(sf.Pipeline, ref.Pipeline()) {
		t.Errorf("statistics file's pipeline %+v, want %+v", sf.Pipeline, ref.Pipeline())
	}
}
