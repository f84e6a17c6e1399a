package pipeline

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"

	"github.com/flycl/flycl/internal/testimages"
	"github.com/flycl/flycl/vision/dataset"
)

// TestImagesThroughBeamFileSystems learns from a folder of images
// (DIR/train/<class>/<image>, drawn by testimages) once from a local
// folder and once from the same files in Beam's memfs
// ("folder:memfs://..."), which the launcher and every worker stage
// through Beam's file systems: the same model bit for bit (λ, GCV, G, S,
// coefficients, predictions); the memfs run reads the SqueezeNet weights
// (a folder of .npy files) from memfs as well. A memfs folder with no file
// is an error naming it. Needs ONNX Runtime and the shared SqueezeNet weights.
func TestImagesThroughBeamFileSystems(t *testing.T) {
	needShared(t)
	dir := t.TempDir()
	local := filepath.Join(dir, "images")
	const remote = "memfs://flycl-test-images/set"
	names, err := testimages.WriteFolder(filepath.Join(local, "train"), []string{"discs", "stripes", "checks"}, 8, 40, "jpg", rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(local, "train", filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		memfs.Write(remote+"/train/"+name, b)
	}
	bbSpec := "squeezenet:" + squeezeDir
	ds, err := dataset.Open("folder:"+local, "train")
	if err != nil {
		t.Fatal(err)
	}
	all := make([]int, ds.Len())
	for i := range all {
		all[i] = i
	}
	x, _ := extractSubset(t, ds, all, bbSpec) // skips without ONNX Runtime

	cfg := testConfig()
	cfg.M, cfg.K = 500, 100
	opt := Options{Data: "folder:" + local, Split: "train", Backbone: bbSpec, ORTLib: testLibrary(), Config: cfg,
		Shards: 2, Branches: 2, BatchSize: 32, BlockRows: 200, FailShard: -1, Out: filepath.Join(dir, "local.flycl")}
	want, err := runPipeline(t, opt)
	if err != nil {
		t.Fatal(err)
	}
	// the memfs run reads the backbone weights from memfs too
	const weights = "memfs://flycl-test-images/squeezenet1.1"
	files, err := os.ReadDir(squeezeDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range files {
		b, err := os.ReadFile(filepath.Join(squeezeDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		memfs.Write(weights+"/"+e.Name(), b)
	}
	opt.Data, opt.Backbone, opt.Out = "folder:"+remote, "squeezenet:"+weights, remote+"/model.flycl"
	ctx := context.Background()
	got := runToURL(t, opt)
	d, err := DiffModels(ctx, want, got, x)
	if err != nil {
		t.Fatal(err)
	}
	if len(d) > 0 {
		t.Errorf("model from images in memfs differs from the local folder's: %v", d)
	}

	missing := opt
	missing.Data, missing.Out = "folder:memfs://flycl-test-images/none", ""
	if _, err := MakePlan(missing); err == nil || !strings.Contains(err.Error(), "memfs://flycl-test-images/none") {
		t.Errorf("missing memfs folder: %v, want an error naming it", err)
	}
}
