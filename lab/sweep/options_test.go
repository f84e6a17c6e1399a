package sweep

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/lab/experiment"
	"github.com/flycl/flycl/lab/methods"
)

func okSweep() Sweep {
	cfg := flycl.DefaultConfig()
	cfg.M, cfg.P, cfg.K, cfg.Lambdas = 64, 3, 16, []float64{1e-2, 1, 1e2}
	return Sweep{
		Param: "k", Values: "8,16",
		Options:  methods.Options{FlyCL: cfg, OnlineBatch: 1000, HebbianPasses: 1},
		Protocol: experiment.ProtocolSettings{Tasks: 2, Seeds: "5", Order: "flycl"},
	}
}

// TestSweepCheck: the settings that need no data, in order, each error
// naming the flag.
func TestSweepCheck(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Sweep)
		err  string
	}{
		{"valid", func(*Sweep) {}, ""},
		{"no tasks", func(s *Sweep) { s.Protocol.Tasks = 0 }, "--tasks 0"},
		{"no batch", func(s *Sweep) { s.Options.OnlineBatch = 0 }, "--online-batch 0"},
		{"not an integer", func(s *Sweep) { s.Values = "8,x" }, `--values 8,x: "x" is not an integer`},
		{"k above m", func(s *Sweep) { s.Values = "8,65" }, "--param k --values 8,65"},
		{"unknown param", func(s *Sweep) { s.Param = "q" }, `parameter "q"`},
		{"tasks before values", func(s *Sweep) { s.Protocol.Tasks, s.Values = 0, "x" }, "--tasks 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := okSweep()
			c.edit(&s)
			err := s.Check()
			if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Fatalf("Check() = %v, want %q", err, c.err)
			}
		})
	}
}

// TestSweepRun: a configuration without a W for the features' dimension
// is refused before the protocol; a valid sweep gives one point per
// value, with the value in its configuration.
func TestSweepRun(t *testing.T) {
	const d, classes, per = 6, 4, 8
	r := rand.New(rand.NewPCG(1, 2))
	train := &features.Set{D: d}
	for i := 0; i < classes*per; i++ {
		for j := 0; j < d; j++ {
			v := r.NormFloat64()
			if j == i%classes {
				v += 4
			}
			train.X = append(train.X, float32(v))
		}
		train.Labels = append(train.Labels, i%classes)
		train.N++
	}
	for _, c := range []struct {
		name string
		edit func(*Sweep)
		err  string
		ks   []int
	}{
		{"valid", func(*Sweep) {}, "", []int{8, 16}},
		{"p above d", func(s *Sweep) { s.Param, s.Values, s.Protocol.Seeds = "p", "3,7", "x" }, "sweep: p = 7", nil},
		{"bad seeds", func(s *Sweep) { s.Protocol.Seeds = "x" }, `--seeds: "x"`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := okSweep()
			c.edit(&s)
			pts, err := s.Run(context.Background(), train, train, experiment.Hooks{})
			if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Fatalf("Run() = %v, want %q", err, c.err)
			}
			if len(pts) != len(c.ks) {
				t.Fatalf("%d points, want %d", len(pts), len(c.ks))
			}
			for i, k := range c.ks {
				if pts[i].Value != k || pts[i].Config.K != k {
					t.Errorf("point %d: value %d k %d, want %d", i, pts[i].Value, pts[i].Config.K, k)
				}
			}
		})
	}
}
