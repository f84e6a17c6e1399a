package baselines

import (
	"context"
	"fmt"

	"github.com/flycl/flycl/internal/codec"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/ridge"
)

// Hebbian is Fly-CL with its ridge solve replaced by the paper's
// three-factor Hebbian rule (ridge.Accumulator.Hebbian): the same W, top-k
// codes, streaming statistics and per-task GCV λ, but after every task the
// classifier takes Passes steps of ΔC = η (S − G C − λC), warm-started
// from the previous task's classifier (new classes start at zero), instead
// of the Cholesky solve that jumps to the fixed point C* = (G + λI)⁻¹ S.
type Hebbian struct {
	model  *flycl.Model // W and top-k only
	grid   []float64
	method ridge.GCVMethod
	passes int
	acc    *ridge.Accumulator
	cls    classMap
	coef   []float32
	lambda float64
	eta    float64
	ws     ridge.Workspace
	// Progress, if set, is called after every pass with the classifier
	// (classes × m rows, in order of first appearance); it must not keep c.
	Progress func(pass int, c []float32)
}

// NewHebbian returns the Hebbian learner with Fly-CL's configuration for
// d-dimensional features, taking passes steps per task.
func NewHebbian(cfg flycl.Config, d, passes int) (*Hebbian, error) {
	if passes < 1 {
		return nil, fmt.Errorf("hebbian: passes must be at least 1, got %d", passes)
	}
	m, err := flycl.New(cfg, d)
	if err != nil {
		return nil, err
	}
	return NewHebbianFrom(m, passes)
}

// NewHebbianFrom is NewHebbian on the untrained model m (its configuration
// and W), so that it shares them with the Fly-CL it is compared with.
func NewHebbianFrom(m *flycl.Model, passes int) (*Hebbian, error) {
	if passes < 1 {
		return nil, fmt.Errorf("hebbian: passes must be at least 1, got %d", passes)
	}
	c := m.Config()
	acc, err := ridge.NewAccumulator(c.M)
	if err != nil {
		return nil, err
	}
	return &Hebbian{model: m, grid: c.Lambdas, method: c.GCV, passes: passes, acc: acc}, nil
}

// LearnTask adds the task's codes to the statistics, picks λ by GCV on
// the task and runs the Hebbian passes.
func (h *Hebbian) LearnTask(ctx context.Context, x []float32, labels []int) error {
	n, err := checkXY(x, labels, h.model.InputDim())
	if err != nil {
		return fmt.Errorf("hebbian: %w", err)
	}
	codes, err := codec.Expand(ctx, h.model, x)
	if err != nil {
		return fmt.Errorf("hebbian: %w", err)
	}
	m := h.acc.Dim()
	idx := h.cls.add(labels)
	local, nc := localClasses(idx)
	scores, err := h.ws.GCV(ctx, codes, n, m, local, nc, h.grid, h.method)
	if err != nil {
		return fmt.Errorf("hebbian: %w", err)
	}
	h.lambda = h.grid[ridge.BestLambda(scores)]
	if err := h.acc.Add(codes, n, idx); err != nil {
		return fmt.Errorf("hebbian: %w", err)
	}
	h.coef = append(h.coef, make([]float32, h.acc.Classes()*m-len(h.coef))...)
	var progress func(int)
	if h.Progress != nil {
		progress = func(p int) { h.Progress(p, h.coef) }
	}
	h.eta, err = h.acc.Hebbian(ctx, h.coef, h.lambda, 0, h.passes, progress)
	if err != nil {
		return fmt.Errorf("hebbian: %w", err)
	}
	return nil
}

// Statistics returns the accumulated statistics (for comparing with the
// ridge solution; solving on them overwrites the factor workspace only).
func (h *Hebbian) Statistics() *ridge.Accumulator { return h.acc }

// Labels returns the labels of the classifier's rows.
func (h *Hebbian) Labels() []int { return append([]int(nil), h.cls.labels...) }

// LastLambda returns the λ of the last task.
func (h *Hebbian) LastLambda() float64 { return h.lambda }

// Step returns the step size η of the last task.
func (h *Hebbian) Step() float64 { return h.eta }

// Predict returns argmax of h' C for the codes h' of x.
func (h *Hebbian) Predict(ctx context.Context, x []float32) ([]int, error) {
	if h.coef == nil {
		return nil, fmt.Errorf("hebbian: no class learned yet")
	}
	return h.PredictWith(ctx, x, h.coef)
}

// PredictWith classifies x with the classifier c (rows in Labels order).
func (h *Hebbian) PredictWith(ctx context.Context, x []float32, c []float32) ([]int, error) {
	d := h.model.InputDim()
	n, err := checkXY(x, nil, d)
	if err != nil {
		return nil, fmt.Errorf("hebbian: %w", err)
	}
	var expandErr error
	out := predictLinear(func(lo, hi int, _ []float32) []float32 {
		codes, err := codec.Expand(ctx, h.model, x[lo*d:hi*d])
		if err != nil && expandErr == nil {
			expandErr = err
		}
		if err != nil {
			return make([]float32, (hi-lo)*h.acc.Dim())
		}
		return codes
	}, n, h.acc.Dim(), c, h.cls.labels)
	if expandErr != nil {
		return nil, fmt.Errorf("hebbian: %w", expandErr)
	}
	return out, nil
}
