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
	"github.com/flycl/flycl/app/locate"
	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/ridge"
	"github.com/flycl/flycl/vision/backbone"
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
