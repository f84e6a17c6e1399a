package reject

import (
	"math"
	"math/rand/v2"
	"slices"
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
