package reject

import (
	"math"
	"math/rand/v2"
	"testing"
)

// binom returns n choose k as a float64 (exact for the small n here).
func binom(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

func TestTrackValidate(t *testing.T) {
	for _, c := range []struct {
		tr Track
		ok bool
	}{{Track{5, 3}, true}, {Track{1, 1}, true}, {Track{3, 3}, true}, {Track{0, 0}, false}, {Track{3, 0}, false}, {Track{3, 4}, false}} {
		if err := c.tr.Validate(); (err == nil) != c.ok {
			t.Errorf("%+v: Validate %v, want ok %v", c.tr, err, c.ok)
		}
	}
	if got := (Track{1, 1}).FrameKeep(0.95); got != 0.95 {
		t.Errorf("a track of one frame: FrameKeep %g, want the single-frame 0.95", got)
	}
	if got := (Track{5, 3}).FrameKeep(1.5); !math.IsNaN(got) {
		t.Errorf("keep 1.5: FrameKeep %g, want NaN", got)
	}
}

// The Markov bound behind FrameKeep, against a brute force over joint
// distributions of which frames of an object are rejected: every joint
// distribution whose frames are each rejected with probability at most
// 1−FrameKeep(keep) (on average over the frames) rejects the object (at
// least Tries−Quorum+1 frames rejected) with probability at most 1−keep,
// and the distribution that rejects exactly Tries−Quorum+1 frames at once
// reaches it.
func TestTrackFrameKeepBound(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tr := range []Track{{5, 3}, {5, 1}, {5, 5}, {4, 2}, {3, 2}, {1, 1}} {
		for _, keep := range []float64{0.8, 0.9, 0.95} {
			af := 1 - tr.FrameKeep(keep)
			need := tr.Tries - tr.Quorum + 1 // rejected frames that reject the object
			worst := 0.0
			for trial := 0; trial < 2000; trial++ {
				// a random joint distribution over the 2^Tries patterns of
				// rejected frames, sparse half of the time
				p := make([]float64, 1<<tr.Tries)
				for i := range p {
					if trial%2 == 0 || r.IntN(4) == 0 {
						p[i] = r.ExpFloat64()
					}
				}
				p[0] += 1e-9
				var sum, rejected float64 // E[rejected frames]
				for i, v := range p {
					sum += v
					rejected += v * float64(popcount(i))
				}
				// mix with "no frame rejected" so that the mean per-frame
				// rejection is exactly af (or below, if it already is)
				lam := 1.0
				if a := rejected / sum / float64(tr.Tries); a > af {
					lam = af / a
				}
				obj := 0.0
				for i, v := range p {
					if popcount(i) >= need {
						obj += lam * v / sum
					}
				}
				worst = max(worst, obj)
			}
			if worst > 1-keep+1e-12 {
				t.Errorf("%+v keep %g: a joint distribution rejects the object with probability %g > %g", tr, keep, worst, 1-keep)
			}
			// the tight one: need frames rejected together with probability
			// 1−keep, none otherwise: per frame need(1−keep)/Tries = af
			if got := float64(need) * (1 - keep) / float64(tr.Tries); math.Abs(got-af) > 1e-15 {
				t.Errorf("%+v keep %g: the tight distribution rejects a frame with %g, FrameKeep says %g", tr, keep, got, af)
			}
		}
	}
}

func popcount(i int) int {
	n := 0
	for ; i > 0; i &= i - 1 {
		n++
	}
	return n
}

// trackClosedForm is the probability that DecideTrack labels an object
// with some class when each of its frames independently names class j
// with probability p[j] (and none with 1 − Σp), for two classes: the
// multinomial sum over the counts a of one class and b of the other with
// a ≥ quorum and b < a (either class).
func trackClosedForm(tr Track, p [2]float64) float64 {
	n, p0 := tr.Tries, 1-p[0]-p[1]
	total := 0.0
	for w := 0; w < 2; w++ {
		pa, pb := p[w], p[1-w]
		for a := tr.Quorum; a <= n; a++ {
			for b := 0; b < a && a+b <= n; b++ {
				total += binom(n, a) * binom(n-a, b) * math.Pow(pa, float64(a)) * math.Pow(pb, float64(b)) * math.Pow(p0, float64(n-a-b))
			}
		}
	}
	return total
}

// DecideTrack over every tuple of answers, each weighted by its
// probability, against the closed form.
func TestDecideTrackClosedForm(t *testing.T) {
	for _, tr := range []Track{{5, 3}, {5, 2}, {4, 2}, {3, 1}, {5, 5}} {
		for _, p := range [][2]float64{{0.3, 0.3}, {0.7, 0.1}, {0.05, 0.02}, {0.45, 0.45}} {
			probs := [3]float64{1 - p[0] - p[1], p[0], p[1]} // none, class 1, class 2
			answers := make([]int, tr.Tries)
			var labelled float64
			var walk func(i int, w float64)
			walk = func(i int, w float64) {
				if i == tr.Tries {
					if c, _ := DecideTrack(tr, answers, 0); c != 0 {
						labelled += w
					}
					return
				}
				for a := 0; a < 3; a++ {
					answers[i] = a
					walk(i+1, w*probs[a])
				}
			}
			walk(0, 1)
			if want := trackClosedForm(tr, p); math.Abs(labelled-want) > 1e-12 {
				t.Errorf("%+v p %v: DecideTrack labels %g of the objects, the closed form %g", tr, p, labelled, want)
			}
		}
	}
}

// The track rule's false-accept rate on synthetic scores: stranger frames
// of independent standard normal values, each naming one of two classes
// at random, against a per-frame threshold calibrated on a pool of known
// values (normal, mean 2): the share of stranger objects labelled is the
// closed form at the per-frame pass rate 1−Φ(threshold), within a
// binomial tolerance, and below the per-frame rate.
func TestTrackStrangersSynthetic(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pool := make([]float64, 200)
	for i := range pool {
		pool[i] = 2 + r.NormFloat64()
	}
	tr := DefaultTrack
	th := KeepThreshold(pool, tr.FrameKeep(0.95))
	pass := 0.5 * math.Erfc(th/math.Sqrt2) // P(N(0,1) ≥ th)
	want := trackClosedForm(tr, [2]float64{pass / 2, pass / 2})
	const n = 100000
	labelled := 0
	answers := make([]int, tr.Tries)
	for i := 0; i < n; i++ {
		for k := range answers {
			answers[k] = -1
			if r.NormFloat64() >= th {
				answers[k] = r.IntN(2)
			}
		}
		if c, _ := DecideTrack(tr, answers, -1); c >= 0 {
			labelled++
		}
	}
	got := float64(labelled) / n
	// 5 standard deviations of a binomial share: a false failure once in
	// about 3·10⁶ runs
	if tol := 5 * math.Sqrt(want*(1-want)/n); math.Abs(got-want) > tol {
		t.Errorf("strangers labelled %g, closed form %g (tolerance %g)", got, want, tol)
	}
	if !(want < pass) {
		t.Errorf("the track labels %g of the strangers, a frame %g: want fewer", want, pass)
	}
}

func TestDecideTrackCases(t *testing.T) {
	tr := Track{Tries: 5, Quorum: 3}
	for _, c := range []struct {
		in   []string
		want string
		n    int
	}{
		{[]string{"cat", "cat", "", "cat", "dog"}, "cat", 3},
		{[]string{"cat", "cat", "", "", "dog"}, "", 0},                 // 2 < quorum
		{[]string{"cat", "cat", "cat"}, "", 0},                         // too few tries yet
		{[]string{"cat", "cat", "cat", "dog", "dog", "dog"}, "cat", 3}, // the first 5 only
		{[]string{"", "", "", "", ""}, "", 0},
	} {
		if got, n := DecideTrack(tr, c.in, ""); got != c.want || n != c.n {
			t.Errorf("%q: %q (%d), want %q (%d)", c.in, got, n, c.want, c.n)
		}
	}
	// a tie between two classes labels nothing
	if got, _ := DecideTrack(Track{Tries: 4, Quorum: 2}, []string{"cat", "dog", "dog", "cat"}, ""); got != "" {
		t.Errorf("a tie: %q, want none", got)
	}
}
