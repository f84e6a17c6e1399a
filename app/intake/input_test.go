package intake

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/vision/dataset"
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
