package reject

import (
	"math"
	"math/rand/v2"
	"testing"
)

// nll is FitTemperature's objective written out again: the mean negative
// log-likelihood of the true classes under softmax(row/T).
func nll(scores []float32, nc int, cls []int, T float64) float64 {
	sum := 0.0
	for i, c := range cls {
		row := scores[i*nc : (i+1)*nc]
		z := 0.0
		for _, v := range row {
			z += math.Exp(float64(v) / T)
		}
		sum -= float64(row[c])/T - math.Log(z)
	}
	return sum / float64(len(cls))
}

// TestFitTemperature: the fitted temperature minimises the negative
// log-likelihood (no temperature on a fine logarithmic grid does better),
// scores drawn from a softmax with a known temperature get it back within
// four standard errors of the maximum-likelihood estimate, and one class
// gives 0.
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
	if got <= MinTemperature(scores, nc) {
		t.Fatalf("T=%g at the lower bound: the test needs the likelihood's own minimum", got)
	}
	for T := 0.01; T < 10; T *= 1.001 {
		if nll(scores, nc, cls, T) < nll(scores, nc, cls, got)-1e-12 {
			t.Fatalf("T=%g has negative log-likelihood %.9f, below the fitted T=%g's %.9f", T, nll(scores, nc, cls, T), got, nll(scores, nc, cls, got))
		}
	}
	// the standard error of the maximum-likelihood β = 1/T is
	// 1/sqrt(n·I), I the Fisher information per row: the variance of a
	// row's score under softmax(β·row) (the second derivative of its
	// negative log-likelihood), at the true β
	info := 0.0
	for i := 0; i < n; i++ {
		row := scores[i*nc : (i+1)*nc]
		z, m1, m2 := 0.0, 0.0, 0.0
		for _, v := range row {
			e := math.Exp(float64(v) / trueT)
			z += e
			m1 += e * float64(v)
			m2 += e * float64(v) * float64(v)
		}
		info += m2/z - (m1/z)*(m1/z)
	}
	se := 1 / math.Sqrt(info)
	if d := math.Abs(1/got - 1/trueT); d > 4*se {
		t.Errorf("fitted 1/T=%g, the scores were drawn with 1/T=%g: off by %g, more than 4 standard errors (%g)", 1/got, 1/trueT, d, 4*se)
	}
	if FitTemperature(scores[:n], 1, cls) != 0 {
		t.Error("one class: a temperature is not determined, want 0")
	}
}

// TestFitTemperatureOneWrong: two classes, k rows answered right by a
// margin g and one answered wrong by the same margin: the likelihood
// k·log σ(g/T) + log σ(−g/T) is greatest where σ(g/T)/σ(−g/T) = k, at
// T = g/ln k.
func TestFitTemperatureOneWrong(t *testing.T) {
	for _, tc := range []struct {
		k int
		g float64
	}{{2, 0.3}, {6, 0.4}, {20, 0.8}, {79, 0.2}} {
		n := tc.k + 1
		scores := make([]float32, 2*n)
		cls := make([]int, n)
		for i := range cls {
			cls[i] = i % 2
			win := cls[i]
			if i == tc.k { // the wrong answer
				win = 1 - cls[i]
			}
			scores[2*i+win] = float32(0.5 + tc.g)
			scores[2*i+1-win] = 0.5
		}
		g := float64(float32(0.5+tc.g) - 0.5) // the margin in float32
		want := g / math.Log(float64(tc.k))
		if want < MinTemperature(scores, 2) {
			t.Fatalf("k=%d: the bound binds, not the case under test", tc.k)
		}
		// the search stops within a relative 1e-6 of 1/T
		if got := FitTemperature(scores, 2, cls); math.Abs(got-want) > 1e-5*want {
			t.Errorf("k=%d margin %g: T=%g, want %g", tc.k, tc.g, got, want)
		}
	}
}

// TestFitTemperatureAllRightMean: rows all answered right, of several
// classes and margins: the likelihood has no maximum, and the rows' mean
// top-class probability at the fitted T (computed here again) is
// Laplace's (N+1)/(N+2): the mean is below it at T a relative 1e-5 higher
// and above it at T a relative 1e-5 lower (the bisection stops within
// 1e-6 of log(1/T)).
func TestFitTemperatureAllRightMean(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	const nc, n = 5, 17
	scores := make([]float32, n*nc)
	cls := make([]int, n)
	for i := range cls {
		cls[i] = r.IntN(nc)
		row := scores[i*nc : (i+1)*nc]
		for c := range row {
			row[c] = float32(r.Float64() * 0.5)
		}
		row[cls[i]] = 0.6 + float32(r.Float64()) // above every other
	}
	got := FitTemperature(scores, nc, cls)
	if got <= MinTemperature(scores, nc) {
		t.Fatalf("T=%g at the lower bound: not the case under test", got)
	}
	mean := func(T float64) float64 {
		s := 0.0
		for i := range cls {
			row := scores[i*nc : (i+1)*nc]
			z, top := 0.0, 0.0
			for _, v := range row {
				e := math.Exp(float64(v) / T)
				z += e
				top = max(top, e)
			}
			s += top / z
		}
		return s / n
	}
	target := float64(n+1) / float64(n+2)
	if !(mean(got*(1+1e-5)) < target && mean(got*(1-1e-5)) > target) {
		t.Fatalf("T=%g: mean top-class probability %g (at T±1e-5: %g, %g), want %g", got, mean(got), mean(got*(1+1e-5)), mean(got*(1-1e-5)), target)
	}
}

// TestFitTemperatureAllCorrect: a small pool whose leave-one-out answers
// are all right, with one margin g between two classes, has the closed
// form σ(g/T) = (N+1)/(N+2), T = g/ln(N+1): finite, where the likelihood
// runs to T → 0 (p = 1 for every answer).
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

// TestFitTemperatureTies: rows none of which is answered wrong but some
// tied (the true class level with another) have no likelihood maximum
// either: T is not pushed to the lower bound, as the cross-entropy's
// search would push it (its minimum is at the edge of the interval), but
// set where the mean top-class probability (computed here again) is
// Laplace's (R+1)/(N+2), R the rows strictly right; a tie is evidence
// against confidence, so T is at least that of the same rows with no tie.
// Scores that are not finite give 0.
func TestFitTemperatureTies(t *testing.T) {
	const g = 1.0
	for _, tc := range []struct{ n, ties int }{{3, 1}, {10, 2}, {20, 6}} {
		scores := make([]float32, 2*tc.n)
		cls := make([]int, tc.n)
		for i := range cls {
			cls[i] = i % 2
			scores[2*i+cls[i]] = 1 + g
			scores[2*i+1-cls[i]] = 1
			if i < tc.ties {
				scores[2*i+1-cls[i]] = 1 + g
			}
		}
		got := FitTemperature(scores, 2, cls)
		if got <= MinTemperature(scores, 2)*(1+1e-9) {
			t.Fatalf("N=%d, %d ties: T=%g at the lower bound", tc.n, tc.ties, got)
		}
		mean := func(T float64) float64 {
			s := 0.0
			for i := range cls {
				a, b := float64(scores[2*i]), float64(scores[2*i+1])
				s += math.Exp(max(a, b)/T) / (math.Exp(a/T) + math.Exp(b/T))
			}
			return s / float64(tc.n)
		}
		target := float64(tc.n-tc.ties+1) / float64(tc.n+2)
		if !(mean(got*(1+1e-5)) < target && mean(got*(1-1e-5)) > target) {
			t.Errorf("N=%d, %d ties: T=%g, mean top-class probability %g, want %g", tc.n, tc.ties, got, mean(got), target)
		}
		// the closed form without ties, σ(g/T) = (N+1)/(N+2): T = g/ln(N+1)
		if noTie := g / math.Log(float64(tc.n+1)); !(got > noTie) {
			t.Errorf("N=%d, %d ties: T=%g not above the T of no tie, %g", tc.n, tc.ties, got, noTie)
		}
	}
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		scores := []float32{1, 0, 0, 1, bad, 0}
		if got := FitTemperature(scores, 2, []int{0, 1, 0}); got != 0 {
			t.Errorf("a score %v: T=%g, want 0 (undetermined)", bad, got)
		}
	}
}
