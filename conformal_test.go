package flycl

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestConformalRank: the order statistic the threshold takes, worked by
// hand from k = ⌊α(n+1)⌋ (at least 1, at most n).
func TestConformalRank(t *testing.T) {
	for _, tc := range []struct {
		n    int
		keep float64
		k    int
		g    float64 // GuaranteedKeep: 1 − k/(n+1)
	}{
		{0, 0.95, 0, 0},
		{1, 0.95, 1, 1.0 / 2},    // too few: the smallest, 1/2
		{9, 0.9, 1, 9.0 / 10},    // ⌊0.1·10⌋ = 1 exactly (0.1 is not exact in binary)
		{8, 0.9, 1, 8.0 / 9},     // ⌊0.9⌋ = 0: too few, the smallest
		{18, 0.95, 1, 18.0 / 19}, // ⌊0.95⌋ = 0: too few
		{19, 0.95, 1, 19.0 / 20}, // ⌊1⌋ = 1: exactly 95%
		{20, 0.95, 1, 20.0 / 21},
		{24, 0.95, 1, 24.0 / 25},
		{39, 0.95, 2, 38.0 / 40},
		{40, 0.9, 4, 37.0 / 41},
		{99, 0.9, 10, 90.0 / 100},
		{100, 0.5, 50, 51.0 / 101},
		{50, 1, 1, 50.0 / 51}, // keep all: the smallest
		{3, 0.01, 3, 1.0 / 4}, // ⌊0.99·4⌋ = 3 = n
	} {
		if k := ConformalRank(tc.n, tc.keep); k != tc.k {
			t.Errorf("ConformalRank(%d, %g) = %d, want %d", tc.n, tc.keep, k, tc.k)
		}
		if g := GuaranteedKeep(tc.n, tc.keep); math.Abs(g-tc.g) > 1e-15 {
			t.Errorf("GuaranteedKeep(%d, %g) = %g, want %g", tc.n, tc.keep, g, tc.g)
		}
	}
}

// TestKeepThresholdExchangeable checks the finite-sample guarantee
// exactly: for n+1 exchangeable scores, the chance that the new one is
// kept is the mean, over the n+1 choices of which score is the new one,
// of [new ≥ KeepThreshold(the other n)]: a brute force over every
// choice. It must be at least keep whenever n+1 ≥ 1/(1−keep), equal
// 1 − k/(n+1) for distinct scores (GuaranteedKeep), and at least it with
// ties.
func TestKeepThresholdExchangeable(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{1, 2, 5, 9, 14, 19, 20, 24, 39, 40, 60, 100} {
		for _, keep := range []float64{0.5, 0.8, 0.9, 0.95, 0.99} {
			for _, ties := range []bool{false, true} {
				vals := make([]float64, n+1)
				for i := range vals {
					vals[i] = r.NormFloat64()
					if ties {
						vals[i] = math.Round(vals[i] * 2)
					}
				}
				kept := 0
				for i := range vals {
					others := slices.Delete(slices.Clone(vals), i, i+1)
					if vals[i] >= KeepThreshold(others, keep) {
						kept++
					}
				}
				share := float64(kept) / float64(n+1)
				g := GuaranteedKeep(n, keep)
				if !ties && math.Abs(share-g) > 1e-12 || ties && share < g-1e-12 {
					t.Errorf("n=%d keep=%g ties=%v: exact kept share %g, GuaranteedKeep %g", n, keep, ties, share, g)
				}
				if float64(n+1)*(1-keep) >= 1-1e-9 && share < keep-1e-12 {
					t.Errorf("n=%d keep=%g: exact kept share %g below the request", n, keep, share)
				}
			}
		}
	}
}

// TestKeepThresholdMonteCarlo: on exchangeable (i.i.d.) synthetic scores,
// the mean kept share of a new score over many draws of a pool of n is
// 1 − k/(n+1). With N draws the mean of N Bernoulli(p) has standard
// deviation √(p(1−p)/N) ≤ 0.5/√N = 0.0025 for N = 40000: the test allows
// 5 of them (a false alarm chance below 1e-6 per case).
func TestKeepThresholdMonteCarlo(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	const draws = 40000
	for _, tc := range []struct {
		n    int
		keep float64
	}{{9, 0.9}, {15, 0.95}, {24, 0.95}, {50, 0.9}} {
		kept := 0
		pool := make([]float64, tc.n)
		for d := 0; d < draws; d++ {
			for i := range pool {
				pool[i] = r.ExpFloat64()
			}
			if r.ExpFloat64() >= KeepThreshold(pool, tc.keep) {
				kept++
			}
		}
		mean := float64(kept) / draws
		p := GuaranteedKeep(tc.n, tc.keep)
		tol := 5 * math.Sqrt(p*(1-p)/draws)
		if math.Abs(mean-p) > tol {
			t.Errorf("n=%d keep=%g: mean kept share %.4f, want %.4f ± %.4f", tc.n, tc.keep, mean, p, tol)
		}
		if n1 := float64(tc.n + 1); n1*(1-tc.keep) >= 1 && mean < tc.keep-tol {
			t.Errorf("n=%d keep=%g: mean kept share %.4f below the request", tc.n, tc.keep, mean)
		}
	}
}

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

// TestCloseScoresNotConfident: on a model learned from few samples of
// well separated classes (every leave-one-out answer right: the case in
// which a likelihood fit collapses T), no prediction whose top two scores
// are within CloseScores of each other gets a probability of
// MaxCloseProbability or more, over inputs between the classes (mixtures
// of two class centres, where the top two scores come close), while the
// inputs of a class still get high probabilities.
func TestCloseScoresNotConfident(t *testing.T) {
	ctx := context.Background()
	const d = 16
	m, err := New(Config{M: 400, P: 6, K: 120, Seed: 5, Lambdas: []float64{1e-2, 1e-1, 1, 10}}, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetCalibration(&UnknownCalibration{}); err != nil {
		t.Fatal(err)
	}
	x, y := clusters(28, 15, d, []int{0, 1, 2}, 1.0) // 3 classes × 5 samples, all answered right by leave-one-out, some barely
	if _, err := m.Learn(ctx, x, y, nil); err != nil {
		t.Fatal(err)
	}
	rej := m.Rejection()
	if !rej.Enabled() || rej.Samples != 15 {
		t.Fatalf("after a first learn of 3 × 5 samples: %v, want rejection on over 15 samples", rej)
	}
	loo, cls := m.LeaveOneOut()
	nc := len(m.Classes())
	for i, c := range cls {
		row := loo[i*nc : (i+1)*nc]
		if slices.Index(row, slices.Max(row)) != c {
			t.Skip("a leave-one-out answer is wrong: not the case under test")
		}
	}
	// the fitted T is (at least) the smoothed cross-entropy's minimum
	if nll := func(T float64) float64 { return smoothedCE(loo, nc, cls, T) }; nll(rej.Temperature) > nll(rej.Temperature*2) {
		t.Fatalf("T=%g is not the smoothed minimum", rej.Temperature)
	}
	r := rand.New(rand.NewPCG(3, 3))
	centre := func(l int) []float32 {
		xs, _ := clusters(uint64(100+l), 1, d, []int{l}, 0)
		return xs
	}
	close, confident := 0, 0
	for trial := 0; trial < 3000; trial++ {
		a, b := r.IntN(3), r.IntN(3)
		w := r.Float64()
		ca, cb := centre(a), centre(b)
		in := make([]float32, d)
		for j := range in {
			in[j] = float32(w*float64(ca[j])+(1-w)*float64(cb[j])) + float32(0.1*r.NormFloat64())
		}
		sc, err := m.Scores(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := rej.Probability(sc)
		if !ok {
			t.Fatal("no probability")
		}
		s := slices.Clone(sc)
		slices.Sort(s)
		s1, s2 := float64(s[nc-1]), float64(s[nc-2])
		if s1-s2 <= CloseScores*math.Abs(s1) {
			close++
			if p >= MaxCloseProbability {
				t.Fatalf("top two scores %g and %g (within %g%%) got p = %g", s1, s2, 100*CloseScores, p)
			}
		}
		if p > 0.9 {
			confident++
		}
	}
	if close < 20 || confident < 100 {
		t.Fatalf("%d inputs with close scores, %d confident: the test did not probe both", close, confident)
	}
}

// TestRejectionString: the one line says the score, threshold, pool,
// the guaranteed share (and when the pool is too small for the share
// asked, how many it needs), the temperature, and why rejection is off.
func TestRejectionString(t *testing.T) {
	for _, tc := range []struct {
		r    Rejection
		want []string
	}{
		{Rejection{Score: ScoreTopCosine, Threshold: -2.5, Keep: 0.95, Samples: 90, Temperature: 0.1},
			[]string{"below top+cosine score -2.5", "keeps 95.6% ", "90 leave-one-out samples", "asked 95%", "temperature 0.1"}},
		{Rejection{Score: ScoreTop, Threshold: 0.2, Keep: 0.95, Samples: 9, Temperature: 0.1},
			[]string{"keeps 90% ", "95% asked needs 19: the smallest score is the threshold"}},
		{Rejection{Score: ScoreTop, Threshold: 0.2, Keep: 0.9, Samples: 8},
			[]string{"keeps 88.9% ", "90% asked needs 9", "no probabilities"}},
		{Rejection{Score: ScoreTop, Threshold: 0.2, Keep: 1, Samples: 3},
			[]string{"keeps 75% ", "100% asked"}},
		{Rejection{Score: ScoreTop, Threshold: 0.2}, []string{"set by hand: no guarantee"}},
		{Rejection{Keep: 0.95}, []string{"unknown off: no calibration sample yet"}},
		{Rejection{Temperature: 0.2}, []string{"unknown off; probabilities at temperature 0.2"}},
	} {
		s := tc.r.String()
		for _, w := range tc.want {
			if !strings.Contains(s, w) {
				t.Errorf("%+v: %q lacks %q", tc.r, s, w)
			}
		}
	}
}
