package methods

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/lab/experiment"
)

// blobs returns n samples of each of classes Gaussian classes in d
// dimensions (class c shifted along dimension c).
func blobs(d, classes, n int) *features.Set {
	r := rand.New(rand.NewPCG(3, 4))
	s := &features.Set{D: d}
	for i := 0; i < classes*n; i++ {
		c := i % classes
		for j := 0; j < d; j++ {
			v := r.NormFloat64()
			if j == c {
				v += 4
			}
			s.X = append(s.X, float32(v))
		}
		s.Labels = append(s.Labels, c)
		s.N++
	}
	return s
}

// okExperiment is a small valid experiment: Fly-CL and NCM, two tasks.
func okExperiment() Experiment {
	cfg := flycl.DefaultConfig()
	cfg.M, cfg.P, cfg.K, cfg.Lambdas = 64, 3, 16, []float64{1e-2, 1, 1e2}
	return Experiment{
		Methods:  "flycl,ncm",
		Options:  Options{FlyCL: cfg, OnlineBatch: 1000, HebbianPasses: 1},
		Protocol: experiment.ProtocolSettings{Tasks: 2, Seeds: "5", Order: "flycl"},
		Desc:     "blobs",
	}
}

// TestExperimentCheck: every setting that needs no data is checked, the
// error naming the flag and quoting the value.
func TestExperimentCheck(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Experiment)
		err  string
	}{
		{"valid", func(*Experiment) {}, ""},
		{"no tasks", func(e *Experiment) { e.Protocol.Tasks = 0 }, "--tasks 0"},
		{"init alone", func(e *Experiment) { e.Protocol.InitGiven, e.Protocol.Init = true, 2 }, "--init and --increment go together"},
		{"no passes", func(e *Experiment) { e.Options.HebbianPasses = 0 }, "--hebbian-passes 0"},
		{"unknown method", func(e *Experiment) { e.Methods = "flycl,nope" }, `unknown method "nope"`},
		{"no methods", func(e *Experiment) { e.Methods = " , " }, "no methods given"},
		{"protocol before options", func(e *Experiment) { e.Protocol.Tasks, e.Options.OnlineBatch = 0, 0 }, "--tasks 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := okExperiment()
			c.edit(&e)
			err := e.Check()
			if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Fatalf("Check() = %v, want %q", err, c.err)
			}
		})
	}
}

// TestExperimentRun: the checks against the data come in order (p for
// the dimension as a *DimensionError of the configuration, then the
// protocol for the classes), Start is called only when they pass, and a
// run gives its result with the description and configuration set, and
// the prototypes with Heatmap alone.
func TestExperimentRun(t *testing.T) {
	train := blobs(6, 4, 8)
	for _, c := range []struct {
		name    string
		edit    func(*Experiment)
		err     string
		dimErr  bool
		heatmap bool
		started bool // the checks passed (a split is refused by the run itself)
	}{
		{"valid", func(*Experiment) {}, "", false, false, true},
		{"heat map", func(e *Experiment) { e.Heatmap = true }, "", false, true, true},
		{"p above d", func(e *Experiment) { e.Options.FlyCL.P = 7 }, "must be at most 6", true, false, false},
		{"p above d before seeds", func(e *Experiment) { e.Options.FlyCL.P, e.Protocol.Seeds = 7, "x" }, "must be at most 6", true, false, false},
		{"bad seeds", func(e *Experiment) { e.Protocol.Seeds = "1,x" }, `--seeds: "x"`, false, false, false},
		{"more tasks than classes", func(e *Experiment) { e.Protocol.Tasks = 9 }, "cannot be split into 9 equal tasks", false, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := okExperiment()
			c.edit(&e)
			started := false
			e.Start = func() { started = true }
			out, err := e.Run(context.Background(), train, train, experiment.Hooks{})
			if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Fatalf("Run() = %v, want %q", err, c.err)
			}
			var de *DimensionError
			var fe *flycl.FieldError
			if errors.As(err, &de) != c.dimErr || c.dimErr && (!errors.As(err, &fe) || fe.Field != "P" || de.Config.P != 7) {
				t.Fatalf("Run() = %#v, want a *DimensionError %v wrapping p's *flycl.FieldError", err, c.dimErr)
			}
			if started != c.started {
				t.Fatalf("Start called %v with error %v", started, err)
			}
			if err != nil {
				return
			}
			res := out.Result
			if res.Train != "blobs" || res.Test != "blobs" || res.Config == nil || res.Config.M != 64 || len(res.Runs) != 2 {
				t.Fatalf("result: train %q test %q config %+v, %d runs", res.Train, res.Test, res.Config, len(res.Runs))
			}
			if (out.Prototypes != nil) != c.heatmap || c.heatmap && (out.Prototypes.Stages == nil || out.Prototypes.Method != "Fly-CL") {
				t.Fatalf("prototypes %+v, want them %v", out.Prototypes, c.heatmap)
			}
		})
	}
}
