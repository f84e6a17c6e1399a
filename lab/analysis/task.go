package analysis

import (
	"context"
	"fmt"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/features"
)

// Task is one task made of a feature set's first classes: what the heat
// map (Heatmap, flycl-lab heatmap) and the Hebbian curve (flycl-lab hebbian)
// learn.
type Task struct {
	X       []float32 // N×D, row-major
	Y       []int
	D       int
	Classes []int // the task's labels, smallest first
}

// FirstClasses is the task of the n smallest labels of s (n ≥ 1), with
// the first perClass samples of each (0: all).
func FirstClasses(s *features.Set, n, perClass int) (*Task, error) {
	all := s.Classes()
	if n < 1 || len(all) < n {
		return nil, fmt.Errorf("analysis: %d classes of a set that has %d", n, len(all))
	}
	if perClass < 0 {
		return nil, fmt.Errorf("analysis: %d samples per class", perClass)
	}
	classes := all[:n]
	x, y, _ := s.FirstPerClass(perClass).Subset(classes)
	return &Task{X: x, Y: y, D: s.D, Classes: classes}, nil
}

// Subset is the task's classes' samples of another set (a test split).
func (t *Task) Subset(s *features.Set) (x []float32, y []int) {
	x, y, _ = s.Subset(t.Classes)
	return x, y
}

// Heatmap teaches a new Fly-CL model of configuration cfg the task t and
// returns the Pearson correlations between its class prototypes at each
// stage (PrototypeCorrelations: the paper's Figure 3) and the λ chosen.
// With center the task's rows are centred first (CenterRows, in place:
// the mean of the task's own samples, so nothing from outside it is
// used).
func Heatmap(ctx context.Context, cfg flycl.Config, t *Task, center bool) (*Stages, float64, error) {
	if center {
		CenterRows(t.X, t.D)
	}
	model, err := flycl.New(cfg, t.D)
	if err != nil {
		return nil, 0, err
	}
	rec, err := model.Learn(ctx, t.X, t.Y, nil)
	if err != nil {
		return nil, 0, err
	}
	st, err := PrototypeCorrelations(ctx, model, t.X, t.Y, t.Classes)
	if err != nil {
		return nil, 0, err
	}
	return st, rec.Lambda, nil
}
