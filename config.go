package flycl

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/ridge"
)

// Config holds Fly-CL's hyper-parameters. It is the one place a
// hyper-parameter is declared: its field, its default (DefaultConfig), its
// validation (Check) and, in the field's tags, its name in files and the
// API (json) and its command-line flag with its help text (flag, help;
// bound to flags by internal/flagbind for every command and the Beam
// launcher). Results (experiment.Config) and the API (api.Info) embed it,
// model files store it whole, so a new field travels with no further
// declaration.
//
// The zero value of a field means its default (DefaultConfig). Its JSON
// form names the fields as a model file's header does, and every
// enumeration by its name (MarshalText).
type Config struct {
	// M is the expansion dimension m, the rows of W (default 10000).
	M int `json:"m" flag:"m" help:"Fly-CL expansion dimension (rows of W)"`
	// P is the non-zeros per row of W (default 300).
	P int `json:"p" flag:"p" help:"Fly-CL non-zeros per row of W, at most the feature dimension d; the paper keeps p/d ≈ 0.4 (300 of d=768), so scale it with d"`
	// K is the coordinates top-k keeps (default 3000: KForM of the
	// default m).
	K int `json:"k" flag:"k" help:"Fly-CL top-k (at most m)"`
	// Seed is the seed of W (default 0).
	Seed uint64 `json:"seed" flag:"w-seed" help:"seed of W"`

	// TopK: signed (default, as the reference code) or magnitude.
	TopK projection.TopKMode `json:"topk" flag:"topk" help:"top-k by signed value (reference code) or magnitude (paper text)"`
	// Lambdas is the GCV grid (default DefaultLambdas, or
	// DefaultRelativeLambdas with LambdaRelative).
	Lambdas []float64 `json:"lambdas" flag:"lambdas" help:"GCV grid"` // FlagHelp adds the relative default
	// GCV is how GCV is computed (default auto).
	GCV ridge.GCVMethod `json:"gcv" flag:"gcv" help:"GCV method: auto, dual, primal, eigen, band"`
	// GCVScope is which samples GCV scores λ on (default: the task's, as
	// the paper).
	GCVScope GCVScope `json:"gcv_scope,omitempty" flag:"gcv-scope" help:"samples GCV scores λ on: task (the current task, as the paper) or all (everything learned so far, exactly from the accumulated statistics; one float64 m×m reduction per task: to a band above m=2500 with OpenBLAS, else tridiagonal)"`
	// Projection is how W is applied (default auto).
	Projection projection.Method `json:"projection" flag:"projection" help:"how W is applied: auto, dense, sparse"`
	// LambdaScale says whether Lambdas are absolute (default) or relative
	// to the mean diagonal of G (see LambdaRelative).
	LambdaScale LambdaScale `json:"lambda_scale,omitempty" flag:"lambda-scale" help:"absolute: --lambdas as given (the paper); relative: --lambdas times the mean diagonal of the Gram matrix GCV works on, for features of any scale (an option, measured in docs/RESULTS.md, section \"The λ grid's scale\")"`
	// WidenGrid, when GCV chooses an edge of the grid, scores further
	// decades beyond that edge (WidenStep at a time, at most MaxWiden
	// decades on either side) until the optimum is inside the scored
	// values (see widenLambdas). Off by default (the paper's fixed grid).
	WidenGrid bool `json:"widen_grid,omitempty" flag:"widen-grid" help:"when GCV chooses an edge of the λ grid, score further decades beyond it until the optimum is inside (off: the paper's fixed grid; a new model learning from images turns it on with the relative grid)"`
	// Dual, when positive, keeps the model in the dual form while it holds
	// at most this many samples: the samples' codes themselves (sparse)
	// and the n×n kernel K = HHᵀ in float64 instead of the m×m G, solved
	// exactly in float64 by K's eigendecomposition (see dual.go). A learn
	// that takes the samples past it switches the model to the primal
	// form for good (G formed from the held codes). In the dual form a
	// grid widened (WidenGrid) is replaced by the minimum of GCV over
	// every λ > 0. 0 (the default) is always primal, as the paper.
	Dual int `json:"dual,omitempty" flag:"dual" help:"keep the model in the dual form (the samples' codes and their n×n kernel, solved exactly in float64; undo and forget drop rows) while it has at most this many samples, then switch to the primal m×m form; 0: always primal (the paper). With --widen-grid the dual form minimises GCV over every λ > 0"`
}

// DefaultLambdas is the GCV grid of the paper's ViT-B/16 runs.
var DefaultLambdas = []float64{1e6, 1e7, 1e8, 1e9}

// DefaultConfig returns the paper's defaults: m=10000, p=300, k=3000
// (KForM), the grid 1e6..1e9, signed top-k.
func DefaultConfig() Config {
	c := Config{M: 10000, P: 300, Lambdas: slices.Clone(DefaultLambdas)}
	c.K = KForM(c.M)
	return c
}

// KForM is the paper's top-k for an expansion dimension m: k = 0.3·m,
// rounded, at least 1 (3000 of m = 10000). A configuration whose m is
// chosen (a new model from images, a benchmark's m) takes its k from it.
func KForM(m int) int { return max(1, int(math.Round(0.3*float64(m)))) }

// FlagHelp returns the help text of field's flag (a Go field name), given
// its help tag: the tag, completed where the text depends on a variable
// (the relative grid's default, DefaultRelativeLambdas, for Lambdas).
// internal/flagbind calls it when it binds a Config.
func (Config) FlagHelp(field, tag string) string {
	if field == "Lambdas" {
		grid := make([]string, len(DefaultRelativeLambdas))
		for i, l := range DefaultRelativeLambdas {
			grid[i] = strconv.FormatFloat(l, 'g', -1, 64)
		}
		return tag + " (with --lambda-scale relative the default is " + strings.Join(grid, ",") + ")"
	}
	return tag
}

// WithDefaults returns c with its zero fields filled: DefaultConfig's
// values, and for an empty grid DefaultLambdas, or DefaultRelativeLambdas
// when LambdaScale is LambdaRelative.
func (c Config) WithDefaults() Config { return c.withDefaults() }

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

// FieldError is an invalid field of a Config.
type FieldError struct {
	Field   string // the field, as Go names it ("K")
	Value   any    // its value
	Problem string // what is wrong: "must be at least 1"
	// Bound, when set, is the field whose value the Problem refers to
	// ("must be at most m": "M"), with its value.
	Bound      string
	BoundValue any
}

func (e *FieldError) Error() string {
	return "flycl: " + e.Describe(configName, func(field string) string {
		if field == e.Bound {
			return fmt.Sprint(e.BoundValue)
		}
		return fmt.Sprint(e.Value)
	})
}

// Describe says what is wrong, naming a field as name does (a command
// line: "--k") and writing its value as value does: "k 301: must be at
// most m (300)".
func (e *FieldError) Describe(name, value func(field string) string) string {
	s := fmt.Sprintf("%s %s: %s", name(e.Field), value(e.Field), e.Problem)
	if e.Bound != "" {
		s += fmt.Sprintf(" (%s %s)", name(e.Bound), value(e.Bound))
	}
	return s
}

// configName is a field's name in files (its JSON name).
func configName(field string) string {
	f, ok := reflect.TypeFor[Config]().FieldByName(field)
	if !ok {
		return field
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

// Check reports the first invalid field that is wrong whatever the input
// dimension, as a *FieldError.
func (c Config) Check() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"M", c.M}, {"P", c.P}, {"K", c.K}} {
		if f.v < 1 {
			return &FieldError{Field: f.name, Value: f.v, Problem: "must be at least 1"}
		}
	}
	if c.K > c.M {
		return &FieldError{Field: "K", Value: c.K, Problem: "must be at most m", Bound: "M", BoundValue: c.M}
	}
	for _, l := range c.Lambdas {
		if !(l > 0) || math.IsInf(l, 0) {
			return &FieldError{Field: "Lambdas", Value: c.Lambdas, Problem: fmt.Sprintf("%g is not a positive finite number", l)}
		}
	}
	if c.Dual < 0 {
		return &FieldError{Field: "Dual", Value: c.Dual, Problem: "must be at least 0"}
	}
	if c.GCVScope != GCVTask && c.GCVScope != GCVAll {
		return &FieldError{Field: "GCVScope", Value: int(c.GCVScope), Problem: "unknown GCV scope"}
	}
	if c.LambdaScale != LambdaAbsolute && c.LambdaScale != LambdaRelative {
		return &FieldError{Field: "LambdaScale", Value: int(c.LambdaScale), Problem: "unknown lambda scale"}
	}
	return nil
}

// Validate reports the first invalid field for inputs of dimension d
// (Check, and p at most d: W cannot have more non-zeros per row than the
// features have dimensions; the error suggests the paper's p/d ≈ 0.4). A
// d that is not positive is an input error (ErrBadInput).
func (c Config) Validate(d int) error {
	if d <= 0 {
		return Input(fmt.Errorf("flycl: input dimension must be positive, got %d", d))
	}
	if err := c.Check(); err != nil {
		return err
	}
	if c.P > d {
		return &FieldError{Field: "P", Value: c.P, Problem: fmt.Sprintf("must be at most %d, the input dimension d=%d (W cannot have more non-zeros per row than the features have dimensions; the paper keeps p/d ≈ 0.4: %d for d=%d)",
			d, d, max(1, int(math.Round(0.39*float64(d)))), d)}
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
	// first task it learns (bringing its RMS near 1; at most 2^127, the
	// largest power of two a float32 holds), so that the float32
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
