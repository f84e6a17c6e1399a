package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
)

// TestBeamFileSystems runs the pipeline with its feature file, model file
// and statistics file in Beam's memfs (memfs://...) and with local paths:
// the same samples (sample identities depend on the file's bytes, not its
// name), bit-identical statistics and models. A missing memfs input is an
// error naming it.
func TestBeamFileSystems(t *testing.T) {
	path, fs := syntheticFeatures(t, 90)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	memfs.Write("memfs://flycl-test/train.npz", raw)
	dir := t.TempDir()
	local := Options{Features: path, Config: smallConfig(), Shards: 2, BatchSize: 256, BlockRows: 100, Branches: 2, FailShard: -1,
		Out: filepath.Join(dir, "m.flycl"), StatsOut: filepath.Join(dir, "m.stats")}
	remote := local
	remote.Features, remote.Out, remote.StatsOut = "memfs://flycl-test/train.npz", "memfs://flycl-test/m.flycl", "memfs://flycl-test/m.stats"

	want, err := runPipeline(t, local)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got := runToURL(t, remote)
	d, err := DiffModels(ctx, want, got, fs.X)
	if err != nil {
		t.Fatal(err)
	}
	if len(d) > 0 {
		t.Errorf("model through memfs differs from the local run: %v", d)
	}
	wantStats, err := modelfile.LoadStats(local.StatsOut)
	if err != nil {
		t.Fatal(err)
	}
	b, err := readURL(ctx, remote.StatsOut)
	if err != nil {
		t.Fatal(err)
	}
	gotStats, err := modelfile.DecodeStats(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	sameStats(t, "statistics through memfs", wantStats.Stats, gotStats.Stats)
	if len(gotStats.IDs) != len(wantStats.IDs) || gotStats.Shards[0].Source != wantStats.Shards[0].Source {
		t.Errorf("statistics through memfs: %d samples of %q, local %d of %q", len(gotStats.IDs), gotStats.Shards[0].Source, len(wantStats.IDs), wantStats.Shards[0].Source)
	}

	missing := remote
	missing.Features = "memfs://flycl-test/none.npz"
	if _, err := MakePlan(missing); err == nil || !strings.Contains(err.Error(), "memfs://flycl-test/none.npz") {
		t.Errorf("missing memfs input: %v, want an error naming it", err)
	}
}

// runToURL runs the pipeline of opt on the in-process runner and reads
// back the model it wrote to opt.Out, a path on a Beam file system.
func runToURL(t *testing.T, opt Options) *flycl.Model {
	t.Helper()
	plan, err := MakePlan(opt)
	if err != nil {
		t.Fatal(err)
	}
	p, sc := beam.NewPipelineWithRoot()
	Build(sc, opt, plan)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	b, err := readURL(context.Background(), opt.Out)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modelfile.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	m, err := f.Snapshot.Model()
	if err != nil {
		t.Fatal(err)
	}
	return m
}
