package pipeline

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/ridge"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/extract"

	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
)

// TestMain runs the pipelines of this package on prism, in this process,
// with its workers on loopback; started by TestSeparateProcesses with
// $FLYCL_BEAM_TEST_ROLE set, the test binary is instead one of that test's
// processes (serveRole).
func TestMain(m *testing.M) {
	if role := os.Getenv(roleEnv); role != "" {
		os.Exit(serveRole(role))
	}
	ptest.MainWithDefault(m, "prism")
}

const (
	cifarTar   = "../../../shared/data/cifar10-jpeg.tar.gz"
	squeezeDir = "../../../shared/models/squeezenet1.1"
)

// testLibrary is the ONNX Runtime library: $FLYCL_ORT_LIB, else where
// make ort installs it.
func testLibrary() string {
	if p := os.Getenv("FLYCL_ORT_LIB"); p != "" {
		return p
	}
	return "../../.cache/onnxruntime/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"
}

// firstPerClass returns the positions of the first k samples of each class.
func firstPerClass(ds dataset.Dataset, k int) []int {
	count := map[int]int{}
	var idx []int
	for i := 0; i < ds.Len(); i++ {
		if l := ds.Label(i); count[l] < k {
			count[l]++
			idx = append(idx, i)
		}
	}
	return idx
}

func needShared(t *testing.T) {
	t.Helper()
	for _, p := range []string{cifarTar, squeezeDir} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("shared test data not available: %v", err)
		}
	}
}

// singleProcess extracts the features of ds's samples idx with the
// single-process extractor (extract.Run) and learns them as one task with
// flycl.Model.Learn: the reference the pipeline must reproduce.
func singleProcess(t *testing.T, cfg flycl.Config, ds dataset.Dataset, idx []int, backboneSpec string) (*flycl.Model, []float32, []int) {
	t.Helper()
	x, labels := extractSubset(t, ds, idx, backboneSpec)
	m, err := flycl.New(cfg, len(x)/len(labels))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Learn(context.Background(), x, labels, nil); err != nil {
		t.Fatal(err)
	}
	return m, x, labels
}

func extractSubset(t *testing.T, ds dataset.Dataset, idx []int, backboneSpec string) ([]float32, []int) {
	t.Helper()
	if err := backbone.Init(testLibrary()); err != nil {
		t.Skipf("ONNX Runtime not available: %v", err)
	}
	bb, err := extract.OpenBackbone(backboneSpec, "")
	if err != nil {
		t.Fatal(err)
	}
	fs, _, err := extract.Run(context.Background(), &extract.Job{Data: dataset.Subset(ds, idx), Model: bb, Preset: bb.Preset, BatchSize: 32})
	if err != nil {
		if strings.Contains(err.Error(), "ONNX Runtime") {
			t.Skipf("ONNX Runtime not available: %v", err)
		}
		t.Fatal(err)
	}
	return fs.X, fs.Labels
}

func runPipeline(t *testing.T, opt Options) (*flycl.Model, error) {
	t.Helper()
	plan, err := MakePlan(opt)
	if err != nil {
		t.Fatal(err)
	}
	p, s := beam.NewPipelineWithRoot()
	Build(s, opt, plan)
	if err := ptest.Run(p); err != nil {
		return nil, err
	}
	return modelfile.LoadModel(opt.Out)
}

// testConfig is a small Fly-CL (m=2000 instead of 10000, so that G fits
// the CI machine many times over) with a λ grid around the value GCV picks
// for SqueezeNet features of CIFAR-10.
func testConfig() flycl.Config {
	return flycl.Config{M: 2000, P: 100, K: 500, Seed: 7, Lambdas: []float64{1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8}}
}

// compareModels asserts what "the same learn" means: identical λ, GCV
// scores equal to the precision of the single-process float32 GCV,
// identical class maps and identical predictions on held-out images.
func compareModels(t *testing.T, want, got *flycl.Model, xTest []float32) {
	t.Helper()
	if want.Lambda() != got.Lambda() {
		t.Fatalf("pipeline chose λ=%g, single process λ=%g", got.Lambda(), want.Lambda())
	}
	if got.Samples() != want.Samples() {
		t.Fatalf("pipeline learned %d samples, single process %d", got.Samples(), want.Samples())
	}
	wc, gc := want.Classes().Labels(), got.Classes().Labels()
	if len(wc) != len(gc) {
		t.Fatalf("classes %v, want %v", gc, wc)
	}
	for i := range wc {
		if wc[i] != gc[i] {
			t.Fatalf("classes %v, want %v", gc, wc)
		}
	}
	// The single process computes GCV in float32 (dual form, n < m) from
	// the codes; the pipeline in float64 (primal form) from summed
	// statistics. float32 GCV is accurate to about 1e-4 relative here
	// (ridge's tests bound it against a float64 reference), so the scores
	// must agree to 1e-3 — far closer than grid neighbours, which differ by
	// several percent at least.
	ws, gs := want.History()[0].GCV, got.History()[0].GCV
	for i := range ws {
		if math.Abs(ws[i]-gs[i]) > 1e-3*math.Abs(ws[i]) {
			t.Errorf("GCV(λ=%g): pipeline %.8g, single process %.8g", want.Config().Lambdas[i], gs[i], ws[i])
		}
	}
	pw, err := want.Predictor().Predict(context.Background(), xTest)
	if err != nil {
		t.Fatal(err)
	}
	pg, err := got.Predictor().Predict(context.Background(), xTest)
	if err != nil {
		t.Fatal(err)
	}
	diff := 0
	for i := range pw {
		if pw[i] != pg[i] {
			diff++
		}
	}
	if diff > 0 {
		t.Errorf("%d of %d test predictions differ", diff, len(pw))
	}
	t.Logf("λ=%g, GCV %v, %d test predictions identical", got.Lambda(), gs, len(pw))
}

// TestPipelineMatchesSingleProcess learns 400 CIFAR-10 training images
// (40 per class) with SqueezeNet features on prism and compares the model
// with the single-process learn of the same images.
func TestPipelineMatchesSingleProcess(t *testing.T) {
	needShared(t)
	data := "folder:" + cifarTar
	bbSpec := "squeezenet:" + squeezeDir
	train, err := dataset.Open(data, "train")
	if err != nil {
		t.Fatal(err)
	}
	test, err := dataset.Open(data, "test")
	if err != nil {
		t.Fatal(err)
	}
	idx := firstPerClass(train, 40)
	cfg := testConfig()
	want, x, labels := singleProcess(t, cfg, train, idx, bbSpec)
	xTest, _ := extractSubset(t, test, firstPerClass(test, 20), bbSpec)

	dir := t.TempDir()
	opt := Options{Data: data, Split: "train", Backbone: bbSpec, ORTLib: testLibrary(), Indices: idx, Config: cfg,
		ShardSize: 25, BatchSize: 32, BlockRows: 300, FailShard: -1,
		Out: filepath.Join(dir, "beam.flycl"), StatsOut: filepath.Join(dir, "beam.stats")}
	got, err := runPipeline(t, opt)
	if err != nil {
		t.Fatal(err)
	}
	compareModels(t, want, got, xTest)

	// The statistics file: the G and S flycl stats computes in one process
	// from the single-process features (flycl.Model.TaskStats). ONNX
	// Runtime may round a feature differently when the image sits in a
	// differently composed batch (the pipeline batches within bundles), so
	// the features, not only the sums, can differ in their last float32
	// bits: the bound is float32 rounding of the features (2⁻²⁴) times the
	// ~2 features per G entry's product terms, with a margin: 1e-5 of the
	// largest diagonal entry.
	sf, err := modelfile.LoadStats(opt.StatsOut)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := want.TaskStats(context.Background(), x, labels)
	if err != nil {
		t.Fatal(err)
	}
	compareStats(t, ref, sf.Stats, 1e-5)
	if sf.Pipeline == nil || sf.Pipeline.Name != "squeezenet1.1" || len(sf.IDs) != len(idx) {
		t.Errorf("statistics file: pipeline %+v, %d ids, want squeezenet1.1 and %d", sf.Pipeline, len(sf.IDs), len(idx))
	}
}

// compareStats asserts that got has the classes and counts of want and G
// and S within tol of the largest diagonal entry of G.
func compareStats(t *testing.T, want, got *ridge.Stats, tol float64) {
	t.Helper()
	if got.N != want.N || !slices.Equal(got.Labels, want.Labels) || !slices.Equal(got.Counts, want.Counts) {
		t.Fatalf("statistics: n=%d labels %v counts %v, want n=%d %v %v", got.N, got.Labels, got.Counts, want.N, want.Labels, want.Counts)
	}
	var scale float64
	for i := 0; i < want.M; i++ {
		scale = max(scale, want.G[i*(i+1)/2+i])
	}
	var dg, ds float64
	for i := range want.G {
		dg = max(dg, math.Abs(want.G[i]-got.G[i]))
	}
	for i := range want.S {
		ds = max(ds, math.Abs(want.S[i]-got.S[i]))
	}
	t.Logf("statistics: max |ΔG| = %.3g, max |ΔS| = %.3g, max diag(G) = %.3g", dg, ds, scale)
	if dg > tol*scale || ds > tol*scale {
		t.Errorf("statistics differ: max |ΔG| = %g, max |ΔS| = %g, allowed %g", dg, ds, tol*scale)
	}
}
