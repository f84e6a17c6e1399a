package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/vision/backbone/zoo"
)

// idPipeline is a pipeline identity for d-dimensional features of the
// backbone named spec with weights hash.
func idPipeline(spec, hash string, d int) *modelfile.Pipeline {
	return &modelfile.Pipeline{Backbone: spec, Name: spec, WeightsHash: hash, Output: "features", Dim: d,
		Transform: modelfile.Transform{Preset: "imagenet", Resize: 256, Filter: "bilinear", Crop: 224,
			Mean: [3]float32{0.485, 0.456, 0.406}, Std: [3]float32{0.229, 0.224, 0.225}}}
}

// withPipeline rewrites the feature file src as dst recording p.
func withPipeline(t *testing.T, src, dst string, p *modelfile.Pipeline) {
	t.Helper()
	s, err := features.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	s.Pipeline = p.Text()
	if err := features.Save(dst, s); err != nil {
		t.Fatal(err)
	}
}

// TestFeaturePipelineIdentity: a model created from a feature file that
// records its pipeline takes that pipeline; learn, predict and stats
// refuse a feature file made by another backbone (an error naming both,
// the model file untouched) and accept one made by the same; a file
// without an identity is accepted with a warning when the model has a
// pipeline to compare with (intake.FeaturePipeline, tested there).
func TestFeaturePipelineIdentity(t *testing.T) {
	dir := t.TempDir()
	const d = 6
	plain, test := filepath.Join(dir, "plain.npz"), filepath.Join(dir, "test.npz")
	blobs(t, plain, 1, d, 20, "cat", "dog")
	blobs(t, test, 2, d, 10, "cat", "dog")
	a, b := idPipeline("squeezenet", "aaaa1111aaaa1111", d), idPipeline("mobilenetv2", "bbbb2222bbbb2222", d)
	trainA, testA, testB := filepath.Join(dir, "trainA.npz"), filepath.Join(dir, "testA.npz"), filepath.Join(dir, "testB.npz")
	withPipeline(t, plain, trainA, a)
	withPipeline(t, test, testA, a)
	withPipeline(t, test, testB, b)
	model := filepath.Join(dir, "m.flycl")
	cfg := []string{"--m", "200", "--p", "3", "--k", "60", "--lambdas", "0.1,1,10,100"}
	if _, err := runCLI(t, append([]string{"learn", "--model", model, "--features", trainA}, cfg...)...); err != nil {
		t.Fatal(err)
	}
	f, err := modelfile.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	if f.Pipeline == nil || *f.Pipeline != *a {
		t.Fatalf("model pipeline %+v, want the feature file's %+v", f.Pipeline, a)
	}
	before, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"learn", "--model", model, "--features", testB},
		{"predict", "--model", model, "--features", testB},
		{"stats", "--model", model, "--features", testB, "--shard", "0/1", "--out", filepath.Join(dir, "b.stats")},
	} {
		_, err := runCLI(t, args...)
		if err == nil {
			t.Fatalf("%s of features from another backbone: accepted", args[0])
		}
		for _, w := range []string{testB, "mobilenetv2", "bbbb2222", "squeezenet", "aaaa1111"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to name %q", args[0], err, w)
			}
		}
	}
	if after, err := os.ReadFile(model); err != nil || !bytes.Equal(after, before) {
		t.Fatalf("a refused learn changed the model file (%v)", err)
	}
	if out, err := runCLI(t, "predict", "--model", model, "--features", testA); err != nil || !strings.Contains(out, "cat (") {
		t.Fatalf("predict of the model's own features: %v\n%s", err, out)
	}
	if _, err := runCLI(t, "learn", "--model", model, "--features", testA); err != nil {
		t.Fatalf("learn of the model's own features: %v", err)
	}
	// the rule itself (a file without an identity, a model without one):
	// deploy.TestFeaturePipeline
}

// TestExtractRecordsPipeline: flycl extract records in the feature file
// exactly the pipeline identity that flycl learn --data records in a model
// file made from the same images and backbone (SqueezeNet, real photos),
// so predict --features on that model checks and accepts it; a model made
// by another backbone (MobileNetV2) refuses it. Without ../shared: drawn
// pictures and the built-in weights.
func TestExtractRecordsPipeline(t *testing.T) {
	lib := ortLib(t)
	sq, mnv2 := weightsDir(t, zoo.SqueezeNet), weightsDir(t, zoo.MobileNetV2)
	root := t.TempDir()
	for _, split := range []string{"train", "test"} {
		if err := os.Rename(cifarImages(t, []string{"airplane", "frog"}, 3), filepath.Join(root, split)); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "feat")
	if _, err := runCLI(t, "extract", "--data", "folder:"+root, "--backbone", "squeezenet:"+sq, "--out", out,
		"--ort-lib", lib, "--cache", "", "--quiet"); err != nil {
		t.Fatal(err)
	}
	s, err := features.Load(filepath.Join(out, "test.npz"))
	if err != nil {
		t.Fatal(err)
	}
	fp, err := modelfile.ParsePipeline(s.Pipeline)
	if err != nil {
		t.Fatalf("extract recorded %q: %v", s.Pipeline, err)
	}
	model, other := filepath.Join(root, "sq.flycl"), filepath.Join(root, "mnv2.flycl")
	for _, m := range []struct{ path, backbone string }{{model, "squeezenet:" + sq}, {other, "mobilenetv2:" + mnv2}} {
		if _, err := runCLI(t, "learn", "--model", m.path, "--data", "folder:"+filepath.Join(root, "train"), "--backbone", m.backbone,
			"--m", "200", "--p", "20", "--k", "60", "--lambdas", "1,10,100", "--ort-lib", lib, "--cache", "", "--quiet"); err != nil {
			t.Fatal(err)
		}
	}
	f, err := modelfile.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	if *f.Pipeline != *fp {
		t.Fatalf("extract recorded %+v, learn --data %+v", fp, f.Pipeline)
	}
	if _, err := runCLI(t, "predict", "--model", model, "--features", filepath.Join(out, "test.npz")); err != nil {
		t.Fatalf("predict --features on the same backbone's model: %v", err)
	}
	if _, err := runCLI(t, "predict", "--model", other, "--features", filepath.Join(out, "test.npz")); err == nil || !strings.Contains(err.Error(), "not the model's") {
		t.Fatalf("predict --features on another backbone's model: %v", err)
	}
}
