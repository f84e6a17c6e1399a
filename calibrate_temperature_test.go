package flycl

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flycl/flycl/reject"
)

// TestCloseScoresNotConfident: on a model learned from few samples of
// well separated classes (every leave-one-out answer right: the case in
// which a likelihood fit collapses T), no prediction whose top two scores
// are within reject.CloseScores of each other gets a probability of
// reject.MaxCloseProbability or more, over inputs between the classes (mixtures
// of two class centres, where the top two scores come close), while the
// inputs of a class still get high probabilities.
func TestCloseScoresNotConfident(t *testing.T) {
	ctx := context.Background()
	const d = 16
	m, err := New(Config{M: 400, P: 6, K: 120, Seed: 5, Lambdas: []float64{1e-2, 1e-1, 1, 10}}, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetCalibration(&reject.Calibration{}); err != nil {
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
	loo, cls := m.leaveOneOut()
	nc := m.Classes().Len()
	for i, c := range cls {
		row := loo[i*nc : (i+1)*nc]
		if slices.Index(row, slices.Max(row)) != c {
			t.Skip("a leave-one-out answer is wrong: not the case under test")
		}
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
		sc, err := m.Predictor().Scores(ctx, in)
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
		if s1-s2 <= reject.CloseScores*math.Abs(s1) {
			close++
			if p >= reject.MaxCloseProbability {
				t.Fatalf("top two scores %g and %g (within %g%%) got p = %g", s1, s2, 100*reject.CloseScores, p)
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
