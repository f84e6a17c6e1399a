package reject

import (
	"math"
	"math/rand/v2"
	"testing"
)

// smoothedCE is FitTemperature's objective written out again: the mean
// cross-entropy of softmax(row/T) against targets (N+1)/(N+2) on the true
// class and 1/(N+2) shared by the others.
func smoothedCE(scores []float32, nc int, cls []int, T float64) float64 {
	n := len(cls)
	eps := 1 / float64(n+2)
	sum := 0.0
	for i, c := range cls {
		row := scores[i*nc : (i+1)*nc]
		z := 0.0
		for _, v := range row {
			z += math.Exp(float64(v) / T)
		}
		for j, v := range row {
			w := eps / float64(nc-1)
			if j == c {
				w = 1 - eps
			}
			sum -= w * (float64(v)/T - math.Log(z))
		}
	}
	return sum / float64(n)
}

// TestFitTemperature: the fitted temperature minimises the smoothed
// cross-entropy (no temperature on a fine logarithmic grid does better
// unless the lower bound binds), scores drawn from a softmax with a known
// temperature get it back within the sampling error of 4000 samples
// (the smoothing moves the targets by 1/4002), and one class gives 0.
func TestFitTemperature(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 1))
	const nc, n, trueT = 4, 4000, 0.2
	scores := make([]float32, n*nc)
	cls := make([]int, n)
	for i := 0; i < n; i++ {
		row := scores[i*nc : (i+1)*nc]
		for c := range row {
			row[c] = float32(r.NormFloat64() * 0.3)
		}
		w := make([]float64, nc)
		s := 0.0
		for c := range row {
			w[c] = math.Exp(float64(row[c]) / trueT)
			s += w[c]
		}
		u := r.Float64() * s
		for c := range w {
			if u -= w[c]; u <= 0 || c == nc-1 {
				cls[i] = c
				break
			}
		}
	}
	got := FitTemperature(scores, nc, cls)
	for T := 0.01; T < 10; T *= 1.01 {
		if smoothedCE(scores, nc, cls, T) < smoothedCE(scores, nc, cls, got)-1e-9 {
			t.Fatalf("T=%g has cross-entropy %.6f, below the fitted T=%g's %.6f", T, smoothedCE(scores, nc, cls, T), got, smoothedCE(scores, nc, cls, got))
		}
	}
	if math.Abs(got-trueT)/trueT > 0.1 {
		t.Errorf("fitted T=%g, the scores were drawn with T=%g", got, trueT)
	}
	if FitTemperature(scores[:n], 1, cls) != 0 {
		t.Error("one class: a temperature is not determined, want 0")
	}
}

// TestFitTemperatureAllCorrect: a small pool whose leave-one-out answers
// are all right, with one margin g between two classes, has the smoothed
// fit's closed form σ(g/T) = (N+1)/(N+2), T = g/ln(N+1): finite, where
// the unsmoothed likelihood runs to T → 0 (p = 1 for every answer).
func TestFitTemperatureAllCorrect(t *testing.T) {
	for _, tc := range []struct {
		n int
		g float64
	}{{6, 0.4}, {15, 0.8}, {24, 0.2}} {
		scores := make([]float32, 2*tc.n)
		cls := make([]int, tc.n)
		for i := range cls {
			cls[i] = i % 2
			scores[2*i+cls[i]] = float32(0.5 + tc.g)
			scores[2*i+1-cls[i]] = 0.5
		}
		g := float64(float32(0.5+tc.g) - 0.5) // the margin in float32
		want := max(g/math.Log(float64(tc.n+1)), MinTemperature(scores, 2))
		if got := FitTemperature(scores, 2, cls); math.Abs(got-want) > 1e-5*want {
			t.Errorf("N=%d margin %g: T=%g, want %g", tc.n, tc.g, got, want)
		}
	}
}
