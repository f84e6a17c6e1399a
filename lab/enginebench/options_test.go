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
		{"k above m", func(o *Options) { o.Config.M, o.Config.K = 100, 101 }, 0, "k 101: must be at most m (m 100)"},
		{"no p", func(o *Options) { o.Config.P = 0 }, 0, "p 0: must be at least 1"},
		{"gcv", func(o *Options) { o.Config.GCV = ridge.GCVEigen }, Scales["cub"].Tasks, ""},
		{"p above d", func(o *Options) { o.Config.P = 769 }, 0, "p 769: must be at most 768"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := Options{Scale: "cub", Config: def}
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
			if cfg.GCV != o.Config.GCV || cfg.M != o.Config.M {
				t.Fatalf("config %+v, want %+v", cfg, o.Config)
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
