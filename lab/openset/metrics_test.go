package openset

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestKeepThresholdCounts: the threshold keeps at least the share asked
// and leaves out as many values as that allows, counted here by brute
// force over every n ≤ 40 and several shares, including those whose
// 1−keep is not exact in binary (0.9, 0.95, 0.7).
func TestKeepThresholdCounts(t *testing.T) {
	for _, keep := range []float64{0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 1} {
		for n := 1; n <= 40; n++ {
			vals := make([]float64, n)
			for i, p := range rand.New(rand.NewPCG(uint64(n), 1)).Perm(n) {
				vals[i] = float64(p) + 0.5 // distinct, unsorted
			}
			th := keepThreshold(vals, keep)
			kept := 0
			for _, v := range vals {
				if v >= th {
					kept++
				}
			}
			// the most values a threshold may leave out: the largest
			// integer j with (n − j)/n ≥ keep, in exact integer terms
			most := 0
			for j := 0; j <= n; j++ {
				if big := (n - j) * 1000; big >= int(math.Round(keep*1000))*n {
					most = j
				}
			}
			if want := n - min(most, n-1); kept != want {
				t.Errorf("keep %g, n=%d: %d kept, want %d", keep, n, kept, want)
			}
		}
	}
}
