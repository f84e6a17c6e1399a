package main

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/configflag"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/locate"
	"github.com/flycl/flycl/beam/pipeline"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/ridge"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/extract"
)

// TestModelFlags: the launcher has a flag for every field of flycl.Config
// (top-k, GCV, its scope, the λ scale, the projection, ... as flycl learn),
// defaulting to flycl.DefaultConfig, and --seed still sets W's seed.
func TestModelFlags(t *testing.T) {
	fs := flag.NewFlagSet("flycl-beam", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	model := modelFlags(fs)
	typ := reflect.TypeFor[flycl.Config]()
	names := configflag.New()
	for i := range typ.NumField() {
		name := names.Flag(typ.Field(i).Name)
		if fs.Lookup(name) == nil {
			t.Errorf("no -%s for flycl.Config.%s", name, typ.Field(i).Name)
		}
	}
	if cfg, err := model.Config(); err != nil || !reflect.DeepEqual(cfg, flycl.DefaultConfig()) {
		t.Errorf("defaults %+v (%v), want flycl.DefaultConfig", cfg, err)
	}
	args := []string{"--m", "2000", "--p", "100", "--k", "600", "--seed", "7", "--topk", "magnitude", "--gcv", "primal",
		"--gcv-scope", "all", "--lambda-scale", "relative", "--projection", "sparse", "--widen-grid"}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	cfg, err := model.Config()
	want := flycl.Config{M: 2000, P: 100, K: 600, Seed: 7, TopK: projection.Magnitude, GCV: ridge.GCVPrimal, GCVScope: flycl.GCVAll,
		LambdaScale: flycl.LambdaRelative, Lambdas: flycl.DefaultRelativeLambdas, Projection: projection.Sparse, WidenGrid: true}
	if err != nil || !reflect.DeepEqual(cfg, want) {
		t.Errorf("%v: %+v (%v), want %+v", args, cfg, err, want)
	}
	fs = flag.NewFlagSet("flycl-beam", flag.ContinueOnError)
	model = modelFlags(fs)
	if err := fs.Parse([]string{"--k", "20000"}); err != nil {
		t.Fatal(err)
	}
	if _, err := model.Config(); err == nil || err.Error() != "--k 20000: must be at most m (--m 10000)" {
		t.Errorf("--k above m: %v", err)
	}
}

// TestLaunchConfig: the launcher configures the model as flycl stats and
// flycl learn do for the same input and flags (configflag's
// NewConfig(d, images)), so that Beam's statistics of images merge with
// flycl stats' shards of them: images through a backbone, and a feature
// file recording one, take the image defaults (m = 3000, k = 0.3·m, p
// scaled to d, the relative λ grid with widening) for every flag not
// given, not the paper's m = 10000; a feature file without a backbone
// takes the flags' configuration.
func TestLaunchConfig(t *testing.T) {
	const d = 512
	images := &pipeline.Plan{Dim: d, Pipeline: &modelfile.Pipeline{Backbone: extract.DefaultBackbone, Name: "mobilenetv2-1.0", Output: "features", Dim: d}}
	vectors := &pipeline.Plan{Dim: d}
	for _, tc := range []struct {
		args   []string
		plan   *pipeline.Plan
		images bool
	}{
		{nil, images, true},
		{[]string{"--m", "2000"}, images, true},
		{[]string{"--k", "100", "--w-seed", "3"}, images, true},
		{[]string{"--lambdas", "1,10", "--p", "64"}, images, true},
		{nil, vectors, false},
		{[]string{"--m", "2000", "--k", "600"}, vectors, false},
	} {
		fs := flag.NewFlagSet("flycl-beam", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		model := modelFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		got, err := launchConfig(model, tc.plan)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		// the reference: configflag's own flags, as flycl stats has them
		ref := configflag.New()
		rfs := flag.NewFlagSet("flycl stats", flag.ContinueOnError)
		ref.AddToGo(rfs)
		if err := rfs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		want, err := ref.NewConfig(d, tc.images)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v (images %v): %+v, want configflag's NewConfig(%d, %v) %+v", tc.args, tc.images, got, d, tc.images, want)
		}
		if tc.args == nil {
			def := flycl.DefaultConfig()
			if img := deploy.DefaultImageConfig(d); tc.images && (got.M != img.M || reflect.DeepEqual(got, def)) {
				t.Errorf("images without size flags: m=%d, want the image defaults (m=%d), not the paper's %+v", got.M, img.M, def)
			}
			if !tc.images && !reflect.DeepEqual(got, def) {
				t.Errorf("feature vectors without flags: %+v, want flycl.DefaultConfig", got)
			}
		}
	}
}

// TestBackboneDefault: without --backbone the launcher takes flycl's
// default backbone.
func TestBackboneDefault(t *testing.T) {
	fs := flag.NewFlagSet("flycl-beam", flag.ContinueOnError)
	bb := backboneFlag(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if *bb != extract.DefaultBackbone || fs.Lookup("backbone").DefValue != extract.DefaultBackbone {
		t.Errorf("--backbone defaults to %q, want extract.DefaultBackbone %q", *bb, extract.DefaultBackbone)
	}
}

// TestORTLibrary: the launcher finds ONNX Runtime as flycl does (locate):
// the flag; else where make ort installs it for this build's architecture
// in the working folder or a parent; none found is an error only when
// images are to be extracted.
func TestORTLibrary(t *testing.T) {
	if err := backbone.Supported(); err != nil {
		t.Skip(err)
	}
	t.Setenv(locate.EnvORTLib, "")
	os.Unsetenv(locate.EnvORTLib)
	dir := t.TempDir()
	t.Chdir(dir)
	if lib, err := ortLibrary("/some/libonnxruntime.so", true); err != nil || lib != "/some/libonnxruntime.so" {
		t.Errorf("--ort-lib given: %q, %v", lib, err)
	}
	if lib, err := ortLibrary("", false); err != nil || lib != "" {
		t.Errorf("none, not needed: %q, %v", lib, err)
	}
	if _, err := ortLibrary("", true); !errors.Is(err, locate.ErrORTNotFound) {
		t.Errorf("none, needed: %v", err)
	}
	want := filepath.Join(dir, locate.ORTInstallDir, locate.ORTSubpath)
	if err := os.MkdirAll(filepath.Dir(want), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(want, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "a", "b")
	os.MkdirAll(sub, 0o755)
	t.Chdir(sub)
	if lib, err := ortLibrary("", true); err != nil || lib != want {
		t.Errorf("installed in a parent: %q, %v, want %s", lib, err, want)
	}
}
