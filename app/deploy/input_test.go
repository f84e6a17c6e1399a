package deploy

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/extract"
)

// blobFile writes n samples of d-dimensional Gaussian blobs, one per
// class, to a feature file recording the class names and pipeline p (nil:
// none), and returns its path.
func blobFile(t *testing.T, dir, name string, seed uint64, n, d int, names []string, p *modelfile.Pipeline) string {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	s := &features.Set{N: n, D: d, X: make([]float32, n*d), Labels: make([]int, n), ClassNames: names}
	for i := range n {
		l := i % len(names)
		s.Labels[i] = l
		for j := range d {
			s.X[i*d+j] = float32(r.NormFloat64())
			if j == l {
				s.X[i*d+j] += 4
			}
		}
	}
	if p != nil {
		s.Pipeline = p.Text()
	}
	path := filepath.Join(dir, name)
	if err := features.Save(path, s); err != nil {
		t.Fatal(err)
	}
	return path
}

func testPipeline(spec, hash string, d int) *modelfile.Pipeline {
	return &modelfile.Pipeline{Backbone: spec, Name: spec, WeightsHash: hash, Output: "features", Dim: d,
		Transform: modelfile.Transform{Preset: "imagenet", Resize: 256, Filter: "bilinear", Crop: 224,
			Mean: [3]float32{0.485, 0.456, 0.406}, Std: [3]float32{0.229, 0.224, 0.225}}}
}

// TestFeaturePipeline: the pipeline a feature file records is checked
// against the model's: the same is taken, another refused (naming both),
// a new model adopts it, a model trained on features of unknown origin
// has nothing to compare with; a file without one is accepted, with a
// warning when the model has a pipeline.
func TestFeaturePipeline(t *testing.T) {
	dir := t.TempDir()
	const d = 6
	a, b := testPipeline("squeezenet", "aaaa1111aaaa1111", d), testPipeline("mobilenetv2", "bbbb2222bbbb2222", d)
	plain := blobFile(t, dir, "plain.npz", 1, 10, d, []string{"cat", "dog"}, nil)
	withA := blobFile(t, dir, "a.npz", 1, 10, d, []string{"cat", "dog"}, a)
	load := func(p string) *features.Set {
		s, err := features.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	sPlain, sA := load(plain), load(withA)
	for _, tc := range []struct {
		name    string
		path    string
		s       *features.Set
		model   *modelfile.Pipeline
		trained bool
		want    *modelfile.Pipeline
		warn    []string // words the warning must hold; nil: no warning
		err     []string // words the error must hold; nil: no error
	}{
		{"no identity, model with one", plain, sPlain, a, true, nil, []string{plain, "squeezenet", "aaaa1111"}, nil},
		{"no identity, model without", plain, sPlain, nil, true, nil, nil, nil},
		{"same pipeline", withA, sA, a, true, a, nil, nil},
		{"another pipeline", withA, sA, b, true, nil, nil, []string{withA, "mobilenetv2", "bbbb2222", "squeezenet", "aaaa1111"}},
		{"trained on features of unknown origin", withA, sA, nil, true, nil, nil, nil},
		{"new model adopts it", withA, sA, nil, false, a, nil, nil},
	} {
		p, warn, err := FeaturePipeline(tc.path, tc.s, tc.model, tc.trained)
		switch {
		case tc.err != nil:
			if err == nil {
				t.Errorf("%s: no error", tc.name)
				continue
			}
			for _, w := range tc.err {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: %v, want it to name %q", tc.name, err, w)
				}
			}
			continue
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if (p == nil) != (tc.want == nil) || p != nil && *p != *tc.want {
			t.Errorf("%s: pipeline %+v, want %+v", tc.name, p, tc.want)
		}
		if (warn == "") != (tc.warn == nil) {
			t.Errorf("%s: warning %q", tc.name, warn)
		}
		for _, w := range tc.warn {
			if !strings.Contains(warn, w) {
				t.Errorf("%s: warning %q, want it to name %q", tc.name, warn, w)
			}
		}
	}
	wrong := *sA
	wrong.D = d + 1
	if _, _, err := FeaturePipeline(withA, &wrong, nil, false); err == nil || !strings.Contains(err.Error(), "dimensional") {
		t.Errorf("identity of another dimension: %v", err)
	}
}

// TestOpenInputFeatures: a feature file's shards are its rows, each once
// over all shards, keyed by RowKey of the file's content; class names are
// the file's (or the ones given) in Unicode NFC; a duplicate is refused;
// an input naming nothing or two things is ErrNoInput.
func TestOpenInputFeatures(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const n, d = 23, 5
	path := blobFile(t, dir, "f.npz", 3, n, d, []string{"cat", "e\u0301t\u00e9", "dog"}, nil)
	want, err := features.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	src, err := FeatureSource(path)
	if err != nil {
		t.Fatal(err)
	}
	in, err := OpenInput(InputOptions{Features: path})
	if err != nil {
		t.Fatal(err)
	}
	if in.Len() != n || in.Images() || in.Source != src || len(in.Warnings) != 0 {
		t.Fatalf("input: len %d images %v source %q warnings %v", in.Len(), in.Images(), in.Source, in.Warnings)
	}
	if got := in.Classes(); !slices.Equal(got, []string{"cat", "\u00e9t\u00e9", "dog"}) {
		t.Errorf("class names %q, want them in NFC", got)
	}
	if in.ClassName(1) != "\u00e9t\u00e9" || in.ClassName(7) != "7" {
		t.Errorf("ClassName(1) %q, ClassName(7) %q", in.ClassName(1), in.ClassName(7))
	}
	for _, count := range []int{1, 2, 4, 23} {
		var rows int
		for i := range count {
			s, err := in.Shard(ctx, nil, i, count)
			if err != nil {
				t.Fatal(err)
			}
			lo := i * n / count
			if s.N != (i+1)*n/count-lo || s.D != d {
				t.Fatalf("shard %d/%d: %d×%d", i, count, s.N, s.D)
			}
			for r := range s.N {
				if s.Keys[r] != RowKey(src, lo+r) || s.Labels[r] != want.Labels[lo+r] ||
					!slices.Equal(s.X[r*d:(r+1)*d], want.Row(lo+r)) {
					t.Fatalf("shard %d/%d row %d: key %q label %d, not row %d of the file", i, count, r, s.Keys[r], s.Labels[r], lo+r)
				}
			}
			rows += s.N
		}
		if rows != n {
			t.Errorf("%d shards hold %d rows, want %d", count, rows, n)
		}
	}
	for _, bad := range [][2]int{{-1, 2}, {2, 2}, {0, 0}} {
		if _, err := in.Shard(ctx, nil, bad[0], bad[1]); err == nil {
			t.Errorf("shard %d/%d: no error", bad[0], bad[1])
		}
	}

	given, err := OpenInput(InputOptions{Features: path, ClassNames: []string{"a", "b", "c"}})
	if err != nil {
		t.Fatal(err)
	}
	names, err := given.Names(want.Labels[:3])
	if err != nil || !slices.Equal(names, []string{"a", "b", "c"}) {
		t.Errorf("names %v (%v), want the ones given", names, err)
	}
	var ne *flycl.NameError
	if _, err := OpenInput(InputOptions{Features: path, ClassNames: []string{"x", "x", "y"}}); !errors.As(err, &ne) || !strings.Contains(err.Error(), path) {
		t.Errorf("duplicate class names: %v, want a *flycl.NameError naming the file", err)
	}
	for _, o := range []InputOptions{{}, {Features: path, Files: []string{"a.jpg"}}, {Features: path, Data: dataset.Spec{Kind: "folder", Path: dir}}} {
		if _, err := OpenInput(o); !errors.Is(err, ErrNoInput) {
			t.Errorf("OpenInput(%+v): %v, want ErrNoInput", o, err)
		}
	}
	// the model's pipeline is checked (FeaturePipeline), its warning kept
	p := testPipeline("squeezenet", "aaaa", d)
	in, err = OpenInput(InputOptions{Features: path, Model: p, Trained: true})
	if err != nil || len(in.Warnings) != 1 || !strings.Contains(in.Warnings[0], "squeezenet") {
		t.Errorf("file without identity for a model with one: %v, warnings %q", err, in.Warnings)
	}
}

// TestShardStatsMerge: the statistics of a feature file's shards, merged,
// are those of the whole file (to float64 rounding: the merge sums in
// float64 in a canonical order), and a model NewFromStats makes from them
// has the statistics' expansion whatever the configuration given, and
// learns them into the classifier a learn of the same samples makes (same
// λ, same predictions).
func TestShardStatsMerge(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const n, d = 60, 8
	path := blobFile(t, dir, "f.npz", 5, n, d, []string{"a", "b", "c"}, nil)
	in, err := OpenInput(InputOptions{Features: path})
	if err != nil {
		t.Fatal(err)
	}
	cfg := flycl.Config{M: 300, P: 4, K: 90, Seed: 11, Lambdas: []float64{1}}
	base, err := New(cfg, d, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	statsOf := func(count int) *modelfile.StatsFile {
		var parts []*modelfile.StatsFile
		for i := range count {
			s, err := in.Shard(ctx, nil, i, count)
			if err != nil {
				t.Fatal(err)
			}
			f, err := base.ShardStats(ctx, in, s, i, count)
			if err != nil {
				t.Fatal(err)
			}
			parts = append(parts, f)
		}
		merged, err := modelfile.MergeStats(parts...)
		if err != nil {
			t.Fatal(err)
		}
		if err := modelfile.CheckComplete(merged.Shards); err != nil {
			t.Fatalf("%d shards: %v", count, err)
		}
		return merged
	}
	whole, merged := statsOf(1), statsOf(3)
	if !slices.Equal(merged.Names, []string{"a", "b", "c"}) || merged.Stats.N != n {
		t.Fatalf("merged: names %v, %d samples", merged.Names, merged.Stats.N)
	}
	// Each element of G is a sum of n products of float32 values in
	// float64: summing in another grouping changes it by at most about
	// n·ε64 times the sum of the magnitudes, far below 1e-9 relative.
	for i, g := range whole.Stats.G {
		if diff := math.Abs(g - merged.Stats.G[i]); diff > 1e-9*(1+math.Abs(g)) {
			t.Fatalf("G[%d]: whole %g, merged shards %g", i, g, merged.Stats.G[i])
		}
	}

	// Another configuration's expansion is overridden by the statistics'.
	other := flycl.Config{M: 100, P: 2, K: 10, Seed: 99, Lambdas: []float64{1}}
	fromStats, err := NewFromStats(other, merged, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := fromStats.Model.Config(); c.M != cfg.M || c.P != cfg.P || c.K != cfg.K || c.Seed != cfg.Seed {
		t.Fatalf("model from statistics: m=%d p=%d k=%d seed=%d, want the statistics' %+v", c.M, c.P, c.K, c.Seed, cfg)
	}
	rec, err := fromStats.LearnStatsFile(ctx, merged, 1)
	if err != nil {
		t.Fatal(err)
	}
	learned, _ := New(cfg, d, nil, nil)
	all, _ := in.Samples(ctx, nil, 0, n)
	names, _ := in.Names(all.Labels)
	res, err := learned.Learn(ctx, all.X, names, nil, LearnOptions{Lambda: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Lambda != res.Lambda {
		t.Errorf("λ %g from statistics, %g from the learn", rec.Lambda, res.Lambda)
	}
	p1, _ := fromStats.Model.Predictor().Predict(ctx, all.X)
	p2, _ := learned.Model.Predictor().Predict(ctx, all.X)
	if !slices.Equal(p1, p2) || !slices.Equal(fromStats.Model.Classes().Names(), learned.Model.Classes().Names()) {
		t.Errorf("model from statistics predicts %v, the learned one %v", p1, p2)
	}
}

// TestNewFromStatsExplicitW: statistics computed with an explicit W make
// a model only with that W given (ErrNeedW without it), of their sizes.
func TestNewFromStatsExplicitW(t *testing.T) {
	ctx := context.Background()
	const d = 6
	path := blobFile(t, t.TempDir(), "f.npz", 7, 12, d, []string{"a", "b"}, nil)
	in, err := OpenInput(InputOptions{Features: path})
	if err != nil {
		t.Fatal(err)
	}
	cfg := flycl.Config{M: 50, P: 3, K: 20, Seed: 1, Lambdas: []float64{1}}
	w, err := projection.Generate(50, d, 3, 42)
	if err != nil {
		t.Fatal(err)
	}
	w.Seed = nil // given, not generated
	m, err := New(cfg, d, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := in.Samples(ctx, nil, 0, in.Len())
	sf, err := m.ShardStats(ctx, in, s, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewFromStats(cfg, sf, nil); !errors.Is(err, ErrNeedW) {
		t.Errorf("explicit W not given: %v, want ErrNeedW", err)
	}
	small, _ := projection.Generate(40, d, 3, 42)
	if _, err := NewFromStats(cfg, sf, small); err == nil || !strings.Contains(err.Error(), "m=50") {
		t.Errorf("W of another size: %v", err)
	}
	back, err := NewFromStats(cfg, sf, w)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := back.LearnStatsFile(ctx, sf, 0); err != nil {
		t.Fatal(err)
	}
}

// TestOpenInputImages: a data set's shards, extracted through SqueezeNet
// (CIFAR-10 JPEGs), are the rows of the whole split's extraction, keyed
// by PathKey of the image's path; images without an extractor are an
// error; image files are keyed by their paths.
func TestOpenInputImages(t *testing.T) {
	ctx := context.Background()
	bm := squeezeNet(t, "squeezenet")
	dir := cifarFolder(t, []string{"cat", "ship"}, 5, 1)
	e, err := extract.NewExtractor(bm, "squeezenet", "features", nil)
	if err != nil {
		t.Fatal(err)
	}
	spec := dataset.Spec{Kind: "folder", Path: dir}
	in, err := OpenInput(InputOptions{Data: spec, Split: "train"})
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := OpenData(spec, "train")
	if err != nil {
		t.Fatal(err)
	}
	if !in.Images() || in.Len() != 10 || in.Source != key || !slices.Equal(in.Classes(), []string{"cat", "ship"}) {
		t.Fatalf("input: images %v len %d source %q (want %q) classes %v", in.Images(), in.Len(), in.Source, key, in.Classes())
	}
	if _, err := in.Samples(ctx, nil, 0, 2); err == nil {
		t.Error("images without an extractor: no error")
	}
	whole, err := in.Samples(ctx, e, 0, in.Len())
	if err != nil {
		t.Fatal(err)
	}
	if whole.Pipeline == nil || *whole.Pipeline != *e.Pipeline() {
		t.Errorf("pipeline %+v, want the extractor's", whole.Pipeline)
	}
	// ONNX Runtime on the CPU computes each image's features alone
	// (TestEndToEndRealImages: files and data set agree to the bit), so a
	// shard's rows are the whole split's rows exactly.
	const count = 3
	for i := range count {
		s, err := in.Shard(ctx, e, i, count)
		if err != nil {
			t.Fatal(err)
		}
		lo := i * in.Len() / count
		for r := range s.N {
			if s.Keys[r] != PathKey(key, whole.Paths[lo+r]) || s.Paths[r] != whole.Paths[lo+r] || s.Labels[r] != whole.Labels[lo+r] {
				t.Fatalf("shard %d row %d: key %q path %q label %d; want row %d of the split (%q)", i, r, s.Keys[r], s.Paths[r], s.Labels[r], lo+r, whole.Paths[lo+r])
			}
			if !sameBits(s.X[r*s.D:(r+1)*s.D], whole.X[(lo+r)*s.D:(lo+r+1)*s.D]) {
				t.Fatalf("shard %d row %d: features differ from the whole split's", i, r)
			}
		}
	}
	files, err := OpenInput(InputOptions{Files: whole.Paths[:2]})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := files.Samples(ctx, e, 0, files.Len())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fs.Keys, whole.Paths[:2]) || !sameBits(fs.X, whole.X[:2*whole.D]) {
		t.Errorf("image files: keys %q, features equal to the data set's: %v", fs.Keys, sameBits(fs.X, whole.X[:2*whole.D]))
	}
}
