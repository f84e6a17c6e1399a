package methods

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/codec"
	"github.com/flycl/flycl/lab/experiment"
	"github.com/flycl/flycl/projection"
)

func TestOptionsCheck(t *testing.T) {
	ok := Options{OnlineBatch: 1000, HebbianPasses: 100}
	for _, c := range []struct {
		name string
		edit func(*Options)
		err  string
	}{
		{"defaults", func(*Options) {}, ""},
		{"fixed lambda", func(o *Options) { o.OnlineLambda = 1e3 }, ""},
		{"one pass", func(o *Options) { o.HebbianPasses = 1 }, ""},
		{"no passes", func(o *Options) { o.HebbianPasses = 0 }, "--hebbian-passes 0"},
		{"no batch", func(o *Options) { o.OnlineBatch = 0 }, "--online-batch 0"},
		{"negative batch", func(o *Options) { o.OnlineBatch = -3 }, "--online-batch -3"},
		{"negative lambda", func(o *Options) { o.OnlineLambda = -1 }, "--online-lambda -1"},
		{"NaN lambda", func(o *Options) { o.OnlineLambda = math.NaN() }, "--online-lambda NaN"},
		{"infinite lambda", func(o *Options) { o.OnlineLambda = math.Inf(1) }, "--online-lambda +Inf"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := ok
			c.edit(&o)
			err := o.Check()
			if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Fatalf("Check() = %v, want %q", err, c.err)
			}
		})
	}
}

// TestUseW: m and p become the W's; k beyond the W's rows is refused,
// naming the file.
func TestUseW(t *testing.T) {
	w, err := projection.Generate(50, 20, 8, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, 50, 51} {
		o := Options{FlyCL: flycl.DefaultConfig()}
		o.FlyCL.K = k
		err := o.UseW(w, "w.npz")
		if o.W != w || o.FlyCL.M != 50 || o.FlyCL.P != 8 {
			t.Errorf("k=%d: W %p m=%d p=%d, want %p 50 8", k, o.W, o.FlyCL.M, o.FlyCL.P, w)
		}
		if want := k > 50; (err != nil) != want || err != nil && !strings.Contains(err.Error(), "w.npz") {
			t.Errorf("k=%d: %v, want an error naming w.npz: %v", k, err, want)
		}
	}
}

// TestResultConfig: the recorded W digest is that of the W the run's
// Fly-CL model really uses (read back from a model built by the method,
// through the internal codec), or of the imported W; none when p exceeds
// d; the defaults of the record are filled; every source file is
// identified by its SHA-256 (computed here with crypto/sha256).
func TestResultConfig(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.npz")
	if err := os.WriteFile(train, []byte("some bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := flycl.DefaultConfig()
	cfg.M, cfg.P, cfg.K, cfg.Seed = 64, 5, 8, 7
	const d = 12
	o := Options{FlyCL: cfg, OnlineBatch: 10, HebbianPasses: 3}
	rc, err := o.ResultConfig(d, Inputs{Sources: experiment.Sources{Train: train}, Output: "ignored without a backbone"})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := Parse("flycl", o)
	if err != nil {
		t.Fatal(err)
	}
	l, err := ms[0].New(d, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := codec.Projection(l.(*FlyCL).Model).Digest(); rc.WSHA256 != want {
		t.Errorf("W digest %s, the model's W %s", rc.WSHA256, want)
	}
	if rc.Data != "features" || rc.Output != "" || len(rc.Lambdas) == 0 || rc.OnlineBatch != 10 || rc.HebbianPasses != 3 {
		t.Errorf("record %+v", rc)
	}
	sum := sha256.Sum256([]byte("some bytes"))
	if len(rc.Inputs) != 1 || rc.Inputs[0].SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("inputs %+v, want one with SHA-256 %x", rc.Inputs, sum)
	}

	w, err := projection.Generate(30, d, 4, 99)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.UseW(w, "w.npz"); err != nil {
		t.Fatal(err)
	}
	rc, err = o.ResultConfig(d, Inputs{Data: "mnist", Backbone: "vit", Output: "cls"})
	if err != nil || rc.WSHA256 != w.Digest() || rc.Data != "mnist" || rc.Output != "cls" {
		t.Errorf("imported W: %+v, %v", rc, err)
	}

	o = Options{FlyCL: cfg}
	o.FlyCL.P = d + 1
	if rc, err = o.ResultConfig(d, Inputs{}); err != nil || rc.WSHA256 != "" {
		t.Errorf("p > d: digest %q, %v", rc.WSHA256, err)
	}
	// no grid: the one the model uses, that of the λ scale
	for _, sc := range []flycl.LambdaScale{flycl.LambdaAbsolute, flycl.LambdaRelative} {
		c := cfg
		c.Lambdas, c.LambdaScale = nil, sc
		rc, err := (Options{FlyCL: c}).ResultConfig(d, Inputs{})
		if want := (flycl.Config{LambdaScale: sc}).WithDefaults().Lambdas; err != nil || !slices.Equal(rc.Lambdas, want) {
			t.Errorf("%v scale, no grid: recorded %v (%v), want %v", sc, rc.Lambdas, err, want)
		}
	}
	if _, err := (Options{FlyCL: cfg}).ResultConfig(d, Inputs{Sources: experiment.Sources{Test: filepath.Join(dir, "none")}}); err == nil {
		t.Error("missing source: no error")
	}
}
