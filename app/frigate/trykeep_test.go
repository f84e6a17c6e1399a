package frigate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TryKeep against the vote itself, by brute force: over random joint
// distributions of which of an object's first MinTries tries are
// rejected (the others name its class), each try rejected with
// probability 1 − TryKeep on average, the share of objects the vote
// (Rule.decide) has not labelled after those tries is at most
// 1 − objectKeep; the distribution that rejects MinTries − quorum + 1
// tries at once reaches it.
func TestTryKeepBound(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, rule := range []Rule{{3, 0.6}, {5, 0.6}, {4, 0.75}, {3, 1}} {
		n := rule.MinTries
		for _, keep := range []float64{0.9, 0.95} {
			af := 1 - rule.TryKeep(keep)
			undecided := func(pattern int) bool { // bit k set: try k rejected
				votes := make([]vote, n)
				for k := range votes {
					votes[k] = vote{answer: "cat", prob: nan}
					if pattern>>k&1 == 1 {
						votes[k].answer = ""
					}
				}
				best, _ := rule.decide(votes)
				return best == ""
			}
			worst, tight := 0.0, 0.0
			for trial := 0; trial < 2000; trial++ {
				p := make([]float64, 1<<n)
				for i := range p {
					if trial%2 == 0 || r.IntN(3) == 0 {
						p[i] = r.ExpFloat64()
					}
				}
				p[0] += 1e-9
				var sum, rejected float64
				for i, v := range p {
					sum += v
					rejected += v * float64(popcount(i))
				}
				lam := 1.0
				if a := rejected / sum / float64(n); a > af {
					lam = af / a
				}
				miss := 0.0
				for i, v := range p {
					if undecided(i) {
						miss += lam * v / sum
					}
				}
				worst = max(worst, miss)
			}
			// the tight distribution: the first need tries rejected
			// together with probability 1 − keep (a try is rejected with
			// need(1−keep)/n = af on average)
			need := 0
			for need = 1; need <= n && !undecided(1<<need-1); need++ {
			}
			if need <= n {
				tight = 1 - keep
				if got := float64(need) * (1 - keep) / float64(n); math.Abs(got-af) > 1e-12 {
					t.Errorf("%+v keep %g: the tight distribution rejects a try with %g, TryKeep says %g", rule, keep, got, af)
				}
			}
			if worst > 1-keep+1e-12 || tight > 1-keep+1e-12 {
				t.Errorf("%+v keep %g: the vote leaves %g (tight %g) of the objects unlabelled, more than %g", rule, keep, worst, tight, 1-keep)
			}
		}
	}
}

func popcount(i int) int {
	c := 0
	for ; i > 0; i &= i - 1 {
		c++
	}
	return c
}
