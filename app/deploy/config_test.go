package deploy

import (
	"strings"
	"testing"

	"github.com/flycl/flycl"
)

// TestDefaultImageConfig: p is the paper's 300 of d = 768 scaled to d
// (within [1, d]), k is 0.3·m, and the configuration is valid for d.
func TestDefaultImageConfig(t *testing.T) {
	for _, c := range []struct{ d, p int }{{768, 300}, {1280, 500}, {512, 200}, {100, 39}, {2, 1}, {1, 1}} {
		cfg := DefaultImageConfig(c.d)
		if cfg.P != c.p || cfg.M != ImageM || 10*cfg.K != 3*cfg.M {
			t.Errorf("d=%d: m=%d p=%d k=%d, want m=%d p=%d k=0.3m", c.d, cfg.M, cfg.P, cfg.K, ImageM, c.p)
		}
		if err := cfg.Validate(c.d); err != nil {
			t.Errorf("d=%d: %v", c.d, err)
		}
		if !cfg.WidenGrid || cfg.LambdaScale != flycl.LambdaRelative {
			t.Errorf("d=%d: widen %v scale %v, want a widened relative grid", c.d, cfg.WidenGrid, cfg.LambdaScale)
		}
	}
}

// TestEdgeWarnings: a warning for a GCV choice at either edge of the grid
// scored (the chosen λ before a raise), none for an interior or a fixed λ
// or a flat curve.
func TestEdgeWarnings(t *testing.T) {
	grid := []float64{1, 10, 100}
	rec := func(gcv []float64, lambda, raisedFrom float64) flycl.TaskRecord {
		r := flycl.TaskRecord{Lambda: lambda, RaisedFrom: raisedFrom}
		if gcv != nil {
			r.Grid, r.GCV = grid, gcv
		}
		return r
	}
	for _, c := range []struct {
		name  string
		steps []flycl.TaskRecord
		want  string // "" for no warning
	}{
		{"interior", []flycl.TaskRecord{rec([]float64{3, 1, 2}, 10, 0)}, ""},
		{"fixed", []flycl.TaskRecord{rec(nil, 1, 0)}, ""},
		{"flat", []flycl.TaskRecord{rec([]float64{1, 1, 1}, 1, 0)}, ""},
		{"low", []flycl.TaskRecord{rec([]float64{1, 2, 3}, 1, 0)}, "λ 1 chosen by GCV is the smallest value of the grid it scored (1 to 100): the best λ may lie below it"},
		{"high", []flycl.TaskRecord{rec([]float64{3, 2, 1}, 100, 0)}, "λ 100 chosen by GCV is the largest value of the grid it scored (1 to 100): the best λ may lie above it"},
		{"low raised", []flycl.TaskRecord{rec([]float64{1, 2, 3}, 10, 1)}, "λ 1 chosen by GCV is the smallest"},
		{"batches", []flycl.TaskRecord{rec([]float64{3, 1, 2}, 10, 0), rec([]float64{1, 2, 3}, 1, 0)}, "in 1 of 2 mini-batches"},
	} {
		got := EdgeWarnings(c.steps)
		switch {
		case c.want == "" && got != nil:
			t.Errorf("%s: %q, want none", c.name, got)
		case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want)):
			t.Errorf("%s: %q, want one with %q", c.name, got, c.want)
		}
	}
}
