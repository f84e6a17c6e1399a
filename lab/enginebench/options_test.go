package enginebench

import (
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/ridge"
)

func TestOptionsResolve(t *testing.T) {
	def := flycl.DefaultConfig()
	for _, c := range []struct {
		name      string
		edit      func(*Options)
		wantTasks int
		err       string
	}{
		{"defaults", func(*Options) {}, Scales["cub"].Tasks, ""},
		{"tasks", func(o *Options) { o.Tasks = 3 }, 3, ""},
		{"scale", func(o *Options) { o.Scale = "cifar10" }, Scales["cifar10"].Tasks, ""},
		{"unknown scale", func(o *Options) { o.Scale = "imagenet" }, 0, `--scale "imagenet": unknown (want cifar10 or cifar100 or cub)`},
		{"negative tasks", func(o *Options) { o.Tasks = -1 }, 0, "--tasks -1"},
		{"k above m", func(o *Options) { o.Config.M, o.Config.K = 100, 101 }, 0, "--m 100 --p"},
		{"no p", func(o *Options) { o.Config.P = 0 }, 0, "--m"},
		{"gcv", func(o *Options) { o.GCV = "eigen" }, Scales["cub"].Tasks, ""},
		{"unknown gcv", func(o *Options) { o.GCV = "svd" }, 0, `--gcv "svd"`},
		{"p above d", func(o *Options) { o.Config.P = 769 }, 0, "769"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := Options{Scale: "cub", GCV: "auto", Config: def}
			c.edit(&o)
			sc, cfg, err := o.Resolve()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sc.Tasks != c.wantTasks || sc.Name != o.Scale {
				t.Fatalf("scale %+v, want %s with %d tasks", sc, o.Scale, c.wantTasks)
			}
			if want, _ := ridge.ParseGCVMethod(o.GCV); cfg.GCV != want || cfg.M != o.Config.M {
				t.Fatalf("config %+v: GCV %v, want %v", cfg, cfg.GCV, want)
			}
		})
	}
}

func TestComponentSettingsSetup(t *testing.T) {
	def := flycl.DefaultConfig()
	ok := ComponentSettings{M: def.M, P: def.P, K: def.K, Folds: 5, Runs: 3, TestPerCls: 30}
	for _, c := range []struct {
		name, scale string
		edit        func(*ComponentSettings)
		err         string
	}{
		{"defaults", "cub", func(*ComponentSettings) {}, ""},
		{"unknown scale", "x", func(*ComponentSettings) {}, `--scale "x"`},
		{"one fold", "cub", func(cs *ComponentSettings) { cs.Folds = 1 }, "--folds 1"},
		{"no runs", "cub", func(cs *ComponentSettings) { cs.Runs = 0 }, "--runs 0"},
		{"no test", "cub", func(cs *ComponentSettings) { cs.TestPerCls = 0 }, "--test-per-class 0"},
		{"p above d", "cub", func(cs *ComponentSettings) { cs.P = 769 }, "769"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs := ok
			c.edit(&cs)
			err := cs.Setup(c.scale)
			if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Fatalf("Setup = %v, want %q", err, c.err)
			}
			if err == nil && cs.Scale != Scales[c.scale] {
				t.Fatalf("scale %+v, want %+v", cs.Scale, Scales[c.scale])
			}
		})
	}
}
