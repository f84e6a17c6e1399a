package flycl

import (
	"fmt"
	"math"
	"slices"

	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/ridge"
)

// Config holds Fly-CL's hyper-parameters. The zero value of a field means
// its default (DefaultConfig). Its JSON form names the fields as a model
// file's header does, and every enumeration by its name (MarshalText).
type Config struct {
	M    int    `json:"m"`    // expansion dimension m (default 10000)
	P    int    `json:"p"`    // non-zeros per row of W (default 300)
	K    int    `json:"k"`    // coordinates kept by top-k (default 3000)
	Seed uint64 `json:"seed"` // seed of W (default 0)

	TopK       projection.TopKMode `json:"topk"`                // signed (default, as the reference code) or magnitude
	Lambdas    []float64           `json:"lambdas"`             // GCV grid (default 1e6, 1e7, 1e8, 1e9)
	GCV        ridge.GCVMethod     `json:"gcv"`                 // how GCV is computed (default auto)
	GCVScope   GCVScope            `json:"gcv_scope,omitempty"` // which samples GCV scores λ on (default: the task's, as the paper)
	Projection projection.Method   `json:"projection"`          // how W is applied (default auto)
	// LambdaScale says whether Lambdas are absolute (default) or relative
	// to the mean diagonal of G (see LambdaRelative).
	LambdaScale LambdaScale `json:"lambda_scale,omitempty"`
	// WidenGrid, when GCV chooses an edge of the grid, scores further
	// decades beyond that edge (WidenStep at a time, at most MaxWiden
	// decades on either side) until the optimum is inside the scored
	// values (see WidenLambdas). Off by default (the paper's fixed grid).
	WidenGrid bool `json:"widen_grid,omitempty"`
}

// DefaultLambdas is the GCV grid of the paper's ViT-B/16 runs.
var DefaultLambdas = []float64{1e6, 1e7, 1e8, 1e9}

// DefaultConfig returns the paper's defaults: m=10000, p=300, k=3000, the
// grid 1e6..1e9, signed top-k.
func DefaultConfig() Config {
	return Config{M: 10000, P: 300, K: 3000, Lambdas: slices.Clone(DefaultLambdas)}
}

// withDefaults fills zero fields.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.M == 0 {
		c.M = d.M
	}
	if c.P == 0 {
		c.P = d.P
	}
	if c.K == 0 {
		c.K = d.K
	}
	if len(c.Lambdas) == 0 {
		c.Lambdas = d.Lambdas
		if c.LambdaScale == LambdaRelative {
			c.Lambdas = DefaultRelativeLambdas
		}
	}
	c.Lambdas = slices.Clone(c.Lambdas)
	return c
}

// Validate reports the first invalid field for inputs of dimension d.
func (c Config) Validate(d int) error {
	switch {
	case d <= 0:
		return fmt.Errorf("flycl: input dimension must be positive, got %d", d)
	case c.M <= 0:
		return fmt.Errorf("flycl: m must be positive, got %d", c.M)
	case c.P <= 0 || c.P > d:
		return fmt.Errorf("flycl: p must be in [1, d=%d], got %d", d, c.P)
	case c.K <= 0 || c.K > c.M:
		return fmt.Errorf("flycl: k must be in [1, m=%d], got %d", c.M, c.K)
	}
	for _, l := range c.Lambdas {
		if !(l > 0) || math.IsInf(l, 0) {
			return fmt.Errorf("flycl: lambda %g is not a positive finite number", l)
		}
	}
	if c.GCVScope != GCVTask && c.GCVScope != GCVAll {
		return fmt.Errorf("flycl: unknown GCV scope %d", c.GCVScope)
	}
	if c.LambdaScale != LambdaAbsolute && c.LambdaScale != LambdaRelative {
		return fmt.Errorf("flycl: unknown lambda scale %d", c.LambdaScale)
	}
	return nil
}

// GCVScope says on which samples GCV scores the ridge parameter of a task.
type GCVScope int

const (
	// GCVTask scores λ on the current task only (the paper's choice).
	GCVTask GCVScope = iota
	// GCVAll scores λ on every sample learned so far, the current task
	// included, computed exactly from the accumulated statistics G, S and
	// the sample counts (no samples are stored); see
	// ridge.Accumulator.GCVAllWith. It costs one float64 tridiagonal
	// reduction of an m×m matrix per task.
	GCVAll
)

func (s GCVScope) String() string {
	if s == GCVAll {
		return "all"
	}
	return "task"
}

// ParseGCVScope parses "task" (or "") and "all".
func ParseGCVScope(s string) (GCVScope, error) {
	switch s {
	case "task", "":
		return GCVTask, nil
	case "all":
		return GCVAll, nil
	}
	return GCVTask, fmt.Errorf("flycl: unknown GCV scope %q (want task or all)", s)
}

// MarshalText writes the scope's name ("task" or "all").
func (s GCVScope) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses a scope's name.
func (s *GCVScope) UnmarshalText(b []byte) error {
	v, err := ParseGCVScope(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// LambdaScale says how the λ grid (Config.Lambdas) relates to the data.
type LambdaScale int

const (
	// LambdaAbsolute uses the grid as given (the paper's choice; the
	// default). Its values only make sense for features of the scale
	// they were tuned on.
	LambdaAbsolute LambdaScale = iota
	// LambdaRelative multiplies the grid by the mean diagonal of the Gram
	// matrix GCV scores λ on (the task's HᵀH, or the accumulated G with
	// GCVAll), so the same grid fits features of any scale. The model
	// also multiplies every input by a fixed power of two chosen from the
	// first task it learns (bringing its RMS near 1), so that the float32
	// statistics of huge or tiny features neither overflow nor underflow;
	// being a power of two, this changes no rounding, and being fixed it
	// keeps the statistics of all tasks consistent. A fixed λ given to
	// LearnBatch or LearnTaskWithLambda is used as given (absolute).
	LambdaRelative
)

// DefaultRelativeLambdas is the grid used with LambdaRelative when none is
// given: λ from 10⁻² to 10⁴ times the mean diagonal of G. The floor was
// chosen on MNIST pixels, where 10⁻⁴ let GCV collapse λ on a 2-class task
// (scripts/lambda-scale; docs/RESULTS.md, "The λ grid's scale").
var DefaultRelativeLambdas = []float64{1e-2, 1e-1, 1, 10, 100, 1e3, 1e4}

func (s LambdaScale) String() string {
	if s == LambdaRelative {
		return "relative"
	}
	return "absolute"
}

// ParseLambdaScale parses "absolute" (or "") and "relative".
func ParseLambdaScale(s string) (LambdaScale, error) {
	switch s {
	case "absolute", "":
		return LambdaAbsolute, nil
	case "relative":
		return LambdaRelative, nil
	}
	return LambdaAbsolute, fmt.Errorf("flycl: unknown lambda scale %q (want absolute or relative)", s)
}

// MarshalText writes the scale's name ("absolute" or "relative"); a value
// that is neither is an error.
func (s LambdaScale) MarshalText() ([]byte, error) {
	if s != LambdaAbsolute && s != LambdaRelative {
		return nil, fmt.Errorf("flycl: invalid lambda scale %d", int(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText parses a scale's name (ParseLambdaScale).
func (s *LambdaScale) UnmarshalText(b []byte) error {
	v, err := ParseLambdaScale(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}
