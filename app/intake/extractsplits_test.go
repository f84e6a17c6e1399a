package intake

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/extract"
	"github.com/flycl/flycl/vision/imageio"
)

// TestExtractSplits: which feature files flycl extract writes, by the
// data set's layout built here: a folder of class folders is one set of
// images (train.npz), one with train/ or test/ has both splits, as has
// every other kind.
func TestExtractSplits(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"flat/a", "flat/b", "split/train/a", "split/test/a", "trainonly/train/a"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	both := []ExtractSplit{{"train", "train", "train", "train.npz"}, {"test", "train", "test", "test.npz"}}
	for _, tc := range []struct {
		spec dataset.Spec
		want []ExtractSplit
	}{
		{dataset.Spec{Kind: "folder", Path: filepath.Join(dir, "flat")}, []ExtractSplit{{"", "", "(all)", "train.npz"}}},
		{dataset.Spec{Kind: "folder", Path: filepath.Join(dir, "split")}, both},
		{dataset.Spec{Kind: "folder", Path: filepath.Join(dir, "trainonly")}, both},
		{dataset.Spec{Kind: "folder", Path: filepath.Join(dir, "missing")}, both},
		{dataset.Spec{Kind: "cifar10", Path: filepath.Join(dir, "flat")}, both},
	} {
		if got := ExtractSplits(tc.spec); !slices.Equal(got, tc.want) {
			t.Errorf("%s %s: %v, want %v", tc.spec.Kind, filepath.Base(tc.spec.Path), got, tc.want)
		}
	}
}

// TestExtractFeatures: the features of a split-less folder are the
// extractor's on each image decoded alone (extract.Extractor.Features),
// labelled by folder, with the extractor's pipeline recorded; the second
// call reads them from the cache.
func TestExtractFeatures(t *testing.T) {
	e := builtinSqueezeNet(t)
	dir := t.TempDir()
	files := []string{"a/1.jpg", "a/2.png", "b/1.jpg"}
	for i, f := range files {
		p := filepath.Join(dir, "imgs", f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, encoded(t, uint64(i), filepath.Ext(f)[1:]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.CacheDir = filepath.Join(dir, "cache")
	spec := dataset.Spec{Kind: "folder", Path: filepath.Join(dir, "imgs")}
	sp := ExtractSplits(spec)[0]
	ctx := context.Background()
	var dec imageio.Decoder
	for _, wantCached := range []bool{false, true} {
		got, err := ExtractFeatures(ctx, spec, sp, dec, func(skipped []string) (*extract.Extractor, error) {
			if len(skipped) != 0 {
				t.Errorf("skipped %v", skipped)
			}
			return e, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got.Cached != wantCached || got.N != len(files) || !slices.Equal(got.ClassNames, []string{"a", "b"}) || !slices.Equal(got.Labels, []int{0, 0, 1}) {
			t.Fatalf("cached %v, %d samples, classes %v labels %v", got.Cached, got.N, got.ClassNames, got.Labels)
		}
		if got.Pipeline != e.Pipeline().Text() {
			t.Errorf("pipeline %q, want the extractor's %q", got.Pipeline, e.Pipeline().Text())
		}
		d := e.Dim()
		for i, f := range files {
			img, err := dec.DecodeFile(filepath.Join(dir, "imgs", f))
			if err != nil {
				t.Fatal(err)
			}
			want, err := e.Features(ctx, []*imageio.RGB{img})
			if err != nil {
				t.Fatal(err)
			}
			// the same graph on the same image; batches of other sizes may
			// sum in another order: 1e-4 relative to the row's largest
			if !closeRows(got.X[i*d:(i+1)*d], want, 1e-4) {
				t.Errorf("%s: features differ from the extractor's on the image alone", f)
			}
		}
	}
}

func closeRows(a, b []float32, rel float64) bool {
	if len(a) != len(b) {
		return false
	}
	var big float64
	for _, v := range b {
		big = max(big, float64(v), -float64(v))
	}
	for i := range a {
		if d := float64(a[i] - b[i]); d > rel*big || -d > rel*big {
			return false
		}
	}
	return true
}
