package baselines

import (
	"context"
	"fmt"

	"github.com/flycl/flycl/internal/codec"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/ridge"
)

// Joint is the non-incremental upper bound: after every task it fits a
// fresh Fly-CL model on all the data seen so far as one task (λ by GCV on
// all of it). It keeps every training sample, which is what incremental
// methods avoid.
type Joint struct {
	newModel func() (*flycl.Model, error)
	x        []float32
	labels   []int
	model    *flycl.Model
}

// NewJoint returns the joint upper bound with Fly-CL's configuration for
// d-dimensional features.
func NewJoint(cfg flycl.Config, d int) *Joint {
	return NewJointFrom(func() (*flycl.Model, error) { return flycl.New(cfg, d) })
}

// NewJointFrom returns the joint upper bound that fits a fresh model from
// newModel after every task (so that it shares the configuration and W of
// the Fly-CL it bounds).
func NewJointFrom(newModel func() (*flycl.Model, error)) *Joint { return &Joint{newModel: newModel} }

// LearnTask refits on everything so far.
func (j *Joint) LearnTask(ctx context.Context, x []float32, labels []int) error {
	m, err := j.newModel()
	if err != nil {
		return err
	}
	if _, err := checkXY(x, labels, m.InputDim()); err != nil {
		return fmt.Errorf("joint: %w", err)
	}
	j.x = append(j.x, x...)
	j.labels = append(j.labels, labels...)
	if _, err := m.Learn(ctx, j.x, j.labels, nil); err != nil {
		return fmt.Errorf("joint: %w", err)
	}
	j.model = m
	return nil
}

// Predict uses the last fit.
func (j *Joint) Predict(ctx context.Context, x []float32) ([]int, error) {
	if j.model == nil {
		return nil, fmt.Errorf("joint: no class learned yet")
	}
	return codec.BatchPredictor(j.model).Predict(ctx, x)
}

// LastLambda returns the λ of the last fit.
func (j *Joint) LastLambda() float64 { return j.model.Lambda() }

// RawRidge is the "without projection" ablation: Fly-CL's streaming ridge
// with per-task GCV applied to the raw features (H = x).
type RawRidge struct {
	d      int
	grid   []float64
	method ridge.GCVMethod
	acc    *ridge.Accumulator
	cls    classMap
	coef   []float32
	lambda float64
	ws     ridge.Workspace
}

// NewRawRidge returns the ablation for d-dimensional features.
func NewRawRidge(d int, grid []float64) (*RawRidge, error) {
	acc, err := ridge.NewAccumulator(d)
	if err != nil {
		return nil, err
	}
	return &RawRidge{d: d, grid: grid, acc: acc}, nil
}

// LearnTask adds the task and re-solves with λ from GCV on the task.
func (r *RawRidge) LearnTask(ctx context.Context, x []float32, labels []int) error {
	n, err := checkXY(x, labels, r.d)
	if err != nil {
		return fmt.Errorf("raw ridge: %w", err)
	}
	idx := r.cls.add(labels)
	local, nc := localClasses(idx)
	scores, err := r.ws.GCV(ctx, x, n, r.d, local, nc, r.grid, r.method)
	if err != nil {
		return fmt.Errorf("raw ridge: %w", err)
	}
	r.lambda = r.grid[ridge.BestLambda(scores)]
	if err := r.acc.Add(x, n, idx); err != nil {
		return err
	}
	r.coef, err = r.acc.Solve(ctx, r.lambda)
	return err
}

// LastLambda returns the λ of the last task.
func (r *RawRidge) LastLambda() float64 { return r.lambda }

// Predict returns argmax of x C.
func (r *RawRidge) Predict(_ context.Context, x []float32) ([]int, error) {
	if r.coef == nil {
		return nil, fmt.Errorf("raw ridge: no class learned yet")
	}
	n, err := checkXY(x, nil, r.d)
	if err != nil {
		return nil, fmt.Errorf("raw ridge: %w", err)
	}
	return predictLinear(func(lo, hi int, _ []float32) []float32 { return x[lo*r.d : hi*r.d] }, n, r.d, r.coef, r.cls.labels), nil
}

func localClasses(idx []int) ([]int, int) {
	pos := map[int]int{}
	out := make([]int, len(idx))
	for i, c := range idx {
		p, ok := pos[c]
		if !ok {
			p = len(pos)
			pos[c] = p
		}
		out[i] = p
	}
	return out, len(pos)
}

// CodeNCM is the "without ridge" ablation: cosine similarity to the class
// prototypes of Fly-CL's sparse codes h' = top-k(Wv).
type CodeNCM struct {
	model *flycl.Model
	ncm   *NCM
}

// NewCodeNCM returns the ablation with Fly-CL's projection and top-k.
func NewCodeNCM(cfg flycl.Config, d int) (*CodeNCM, error) {
	m, err := flycl.New(cfg, d)
	if err != nil {
		return nil, err
	}
	return NewCodeNCMFrom(m), nil
}

// NewCodeNCMFrom classifies the codes of the untrained model m (its W and
// top-k; its ridge is never used).
func NewCodeNCMFrom(m *flycl.Model) *CodeNCM {
	return &CodeNCM{model: m, ncm: NewNCM(m.Config().M)}
}

// LearnTask adds the task's codes to the class means.
func (c *CodeNCM) LearnTask(ctx context.Context, x []float32, labels []int) error {
	h, err := codec.Expand(ctx, c.model, x)
	if err != nil {
		return fmt.Errorf("code ncm: %w", err)
	}
	return c.ncm.LearnTask(ctx, h, labels)
}

// Predict classifies the codes by cosine to the prototypes, 1024 samples
// at a time.
func (c *CodeNCM) Predict(ctx context.Context, x []float32) ([]int, error) {
	d := c.model.InputDim()
	if len(x)%d != 0 {
		return nil, fmt.Errorf("code ncm: feature matrix has %d values, not a multiple of d=%d", len(x), d)
	}
	n := len(x) / d
	out := make([]int, 0, n)
	for lo := 0; lo < n; lo += 1024 {
		hi := min(n, lo+1024)
		h, err := codec.Expand(ctx, c.model, x[lo*d:hi*d])
		if err != nil {
			return nil, fmt.Errorf("code ncm: %w", err)
		}
		p, err := c.ncm.Predict(ctx, h)
		if err != nil {
			return nil, err
		}
		out = append(out, p...)
	}
	return out, nil
}
