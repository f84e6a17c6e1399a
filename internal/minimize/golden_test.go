package minimize

import (
	"fmt"
	"math"
	"testing"
)

// TestGolden checks the search against minima known in closed form: the
// vertex of a parabola, the minimum of x − log x (at 1), of cosh(x − c),
// and minima at either end of the interval. Each bracket step keeps the
// minimum inside, so the answer is within tol/2 of it (plus the rounding
// of the last evaluations, far below tol here).
func TestGolden(t *testing.T) {
	const tol = 1e-9
	for _, c := range []struct {
		name   string
		f      func(float64) float64
		lo, hi float64
		want   float64
	}{
		{"parabola", func(x float64) float64 { return (x - 0.3) * (x - 0.3) }, -2, 5, 0.3},
		{"x-log x", func(x float64) float64 { return x - math.Log(x) }, 0.01, 10, 1},
		{"cosh", func(x float64) float64 { return math.Cosh(x + 4.25) }, -11, 3, -4.25},
		{"left end", func(x float64) float64 { return x }, 2, 3, 2},
		{"right end", func(x float64) float64 { return -x }, 2, 3, 3},
	} {
		got := Golden(c.f, c.lo, c.hi, tol)
		// a flat-bottomed parabola's float64 values stop changing within
		// √ε of its vertex: tolerate that much there
		lim := tol
		if c.name != "left end" && c.name != "right end" {
			lim = math.Max(tol, 2*math.Sqrt(0x1p-52)*math.Max(1, math.Abs(c.want)))
		}
		if math.Abs(got-c.want) > lim {
			t.Errorf("%s: Golden = %.12g, want %.12g (±%g)", c.name, got, c.want, lim)
		}
	}
}

func ExampleGolden() {
	x := Golden(func(x float64) float64 { return (x - 2) * (x - 2) }, 0, 5, 1e-6)
	fmt.Printf("%.3f\n", x)
	// Output: 2.000
}
