package flycl

import (
	"fmt"
	"math"
	"slices"
)

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

// inputScaleFor returns the power of two that brings the RMS of x near 1
// (1 when x is all zero or not finite).
func inputScaleFor(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	rms := math.Sqrt(s / float64(len(x)))
	if !(rms > 0) || math.IsInf(rms, 0) {
		return 1
	}
	return math.Ldexp(1, -int(math.Round(math.Log2(rms))))
}

// validInputScale reports whether s can be a model's input scale: 0
// (none yet) or a finite power of two.
func validInputScale(s float64) bool {
	if s == 0 {
		return true
	}
	frac, _ := math.Frexp(s)
	return s > 0 && !math.IsInf(s, 0) && frac == 0.5
}

// InputScale returns the power of two the model multiplies its inputs by
// (1 unless Config.LambdaScale is LambdaRelative and a task was learned).
func (m *Model) InputScale() float64 {
	if m.inScale == 0 {
		return 1
	}
	return m.inScale
}

// scaleInput returns x multiplied by the input scale (x itself when the
// scale is 1).
func (m *Model) scaleInput(x []float32) []float32 {
	if m.inScale == 0 || m.inScale == 1 {
		return x
	}
	out := make([]float32, len(x))
	f := float32(m.inScale)
	for i, v := range x {
		out[i] = v * f
	}
	return out
}

// solveGrid is the grid whose larger values solve tries when G + λI is not
// numerically positive definite: the absolute grid, or none (factors of
// 10 only) when the grid is relative.
func (m *Model) solveGrid() []float64 {
	if m.cfg.LambdaScale == LambdaRelative {
		return nil
	}
	return m.cfg.Lambdas
}

// grid returns the λ values GCV scores for a task with codes h (n×m):
// Config.Lambdas, times the mean diagonal of the Gram matrix GCV works on
// with LambdaRelative.
func (m *Model) grid(h []float32, n int) []float64 {
	if m.cfg.LambdaScale != LambdaRelative {
		return slices.Clone(m.cfg.Lambdas)
	}
	var tr float64
	for _, v := range h[:n*m.cfg.M] {
		tr += float64(v) * float64(v)
	}
	return m.scaledGrid(tr, false)
}

// scaledGrid is the one place the λ grid is scaled: Config.Lambdas times
// the mean diagonal of the Gram matrix GCV works on, whose trace is the
// task's (taskTrace) plus, with GCVAll, the model's G. round32 rounds the
// scale to float32 (statistics summed from different shards, equal up to
// float64 rounding, then give the same grid).
func (m *Model) scaledGrid(taskTrace float64, round32 bool) []float64 {
	g := slices.Clone(m.cfg.Lambdas)
	tr := taskTrace
	if m.cfg.GCVScope == GCVAll {
		for i := 0; i < m.cfg.M; i++ {
			tr += float64(m.acc.G(i, i))
		}
	}
	scale := tr / float64(m.cfg.M)
	if round32 {
		scale = float64(float32(scale))
	}
	if !(scale > 0) || math.IsInf(scale, 0) {
		return g
	}
	for i := range g {
		g[i] *= scale
	}
	return g
}
