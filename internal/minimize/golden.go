package minimize

import "math"

// Golden returns the midpoint of the bracket to which a golden-section
// search narrows [lo, hi] around the minimum of f, stopping when the
// bracket is no wider than tol. f must be unimodal on [lo, hi]; a minimum
// at an end of the interval gives a point within tol of that end. Each
// step evaluates f once.
func Golden(f func(float64) float64, lo, hi, tol float64) float64 {
	g := (math.Sqrt(5) - 1) / 2
	a, b := hi-g*(hi-lo), lo+g*(hi-lo)
	fa, fb := f(a), f(b)
	for hi-lo > tol {
		if fa <= fb {
			hi, b, fb = b, a, fa
			a = hi - g*(hi-lo)
			fa = f(a)
		} else {
			lo, a, fa = a, b, fb
			b = lo + g*(hi-lo)
			fb = f(b)
		}
	}
	return (lo + hi) / 2
}
