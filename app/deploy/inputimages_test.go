package deploy

import (
	"context"
	"slices"
	"testing"

	"github.com/flycl/flycl/app/intake"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/extract"
)

// TestOpenInputImages: a data set's shards, extracted through SqueezeNet
// (CIFAR-10 JPEGs), are the rows of the whole split's extraction, keyed
// by intake.PathKey of the image's path; images without an extractor are an
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
	in, err := intake.OpenInput(intake.InputOptions{Data: spec, Split: "train"})
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := intake.OpenData(spec, "train")
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
			if s.Keys[r] != intake.PathKey(key, whole.Paths[lo+r]) || s.Paths[r] != whole.Paths[lo+r] || s.Labels[r] != whole.Labels[lo+r] {
				t.Fatalf("shard %d row %d: key %q path %q label %d; want row %d of the split (%q)", i, r, s.Keys[r], s.Paths[r], s.Labels[r], lo+r, whole.Paths[lo+r])
			}
			if !sameBits(s.X[r*s.D:(r+1)*s.D], whole.X[(lo+r)*s.D:(lo+r+1)*s.D]) {
				t.Fatalf("shard %d row %d: features differ from the whole split's", i, r)
			}
		}
	}
	files, err := intake.OpenInput(intake.InputOptions{Files: whole.Paths[:2]})
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
