package flycl

import (
	"math"
	"slices"

	"github.com/flycl/flycl/ridge"
)

// inputScaleFor returns the power of two that brings the RMS of x near 1
// (1 when x is all zero or not finite), at most 2^maxScaleExp: the
// inputs are scaled in float32, where 2^128 is infinite, and features
// whose RMS is under 2^-127.5 (subnormal float32) would ask for it.
func inputScaleFor(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	rms := math.Sqrt(s / float64(len(x)))
	if !(rms > 0) || math.IsInf(rms, 0) {
		return 1
	}
	return math.Ldexp(1, min(maxScaleExp, -int(math.Round(math.Log2(rms)))))
}

// maxScaleExp is the exponent of the largest power of two a float32
// holds.
const maxScaleExp = 127

// validInputScale reports whether s can be a model's input scale: 0
// (none yet) or a power of two inputScaleFor can choose, from 2^minScaleExp
// to 2^maxScaleExp. A model file's larger scale would make every input
// infinite in float32, and a smaller one flush ordinary features to 0.
func validInputScale(s float64) bool {
	if s == 0 {
		return true
	}
	frac, exp := math.Frexp(s)
	return s > 0 && !math.IsInf(s, 0) && frac == 0.5 && exp-1 >= minScaleExp && exp-1 <= maxScaleExp
}

// minScaleExp is the exponent of the least input scale inputScaleFor
// chooses: the largest float32 is under 2^128, so the RMS of features is.
const minScaleExp = -128

// inputScale returns the power of two the model multiplies its inputs by
// (1 unless Config.LambdaScale is LambdaRelative and a task was learned).
func (m *Model) inputScale() float64 {
	if m.inScale == 0 {
		return 1
	}
	return m.inScale
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

// statsGrid is the grid for a task given by its statistics:
// Config.Lambdas, times the mean diagonal of the Gram matrix GCV works on
// with LambdaRelative.
func (m *Model) statsGrid(st *ridge.Stats) []float64 {
	if m.cfg.LambdaScale != LambdaRelative {
		return slices.Clone(m.cfg.Lambdas)
	}
	var tr float64
	for i := 0; i < st.M; i++ {
		tr += st.G[i*(i+1)/2+i]
	}
	return m.scaledGrid(tr, true)
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
		g := m.gramDiag()
		for i := 0; i < m.cfg.M; i++ {
			tr += g(i)
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
