package reject

import (
	"math"
	"math/rand/v2"
	"testing"
)

// WithKeep against FromPool, which a learn calibrates by: for every share,
// the threshold is the one FromPool takes from the same pool for that
// share, and at the model's share it is the model's threshold; the share
// of the pool's values kept is at least the conformal guarantee, counted
// by brute force.
func TestWithKeep(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, score := range []Score{ScoreTopCosine, ScoreTop} {
		pool := make([]float32, 40*score.PoolStride())
		for i := range pool {
			pool[i] = float32(r.NormFloat64())
		}
		model := FromPool(Calibration{Score: score, Keep: 0.95}, pool, 0.1)
		for _, keep := range []float64{0.5, 0.8, 0.9, 0.95, 0.99, 1} {
			got, err := model.WithKeep(pool, keep)
			if err != nil {
				t.Fatal(err)
			}
			want := FromPool(Calibration{Score: score, Keep: keep}, pool, 0.1)
			if got.Threshold != want.Threshold || got.Keep != keep || got.Samples != 40 || got.Temperature != 0.1 {
				t.Errorf("%s keep %g: %+v, FromPool %+v", score, keep, got, want)
			}
			// brute force: the pool's values at or above the threshold
			tv, _ := model.Typicality(pool)
			kept := 0
			for _, v := range tv.values {
				if v >= got.Threshold {
					kept++
				}
			}
			if g := GuaranteedKeep(40, keep); float64(kept)/40 < g-1.0/41-1e-12 {
				t.Errorf("%s keep %g: keeps %d of 40 pooled values, guaranteed %g", score, keep, kept, g)
			}
		}
		if _, err := model.WithKeep(pool, 0); err == nil {
			t.Errorf("keep 0 accepted")
		}
	}
	if _, err := (Rule{}).WithKeep([]float32{1, 2}, 0.9); err == nil {
		t.Errorf("a rule without calibration accepted a keep share")
	}
}

func TestParseKeep(t *testing.T) {
	for _, c := range []struct {
		in      string
		keep    float64
		ok, bad bool
	}{
		{"keep:0.9", 0.9, true, false}, {"keep: 0.95", 0.95, true, false}, {"keep:95%", 0.95, true, false},
		{"keep:1", 1, true, false}, {"keep:0", 0, true, true}, {"keep:1.5", 0, true, true}, {"keep:x", 0, true, true},
		{"keep:NaN", 0, true, true}, {"auto", 0, false, false}, {"-2.4", 0, false, false},
	} {
		k, ok, err := ParseKeep(c.in)
		if ok != c.ok || (err != nil) != c.bad || (!c.bad && math.Abs(k-c.keep) > 1e-15) {
			t.Errorf("%q: %g %v %v", c.in, k, ok, err)
		}
	}
}

// ParseKeep never panics, and a share it accepts is in (0, 1].
func FuzzParseKeep(f *testing.F) {
	for _, s := range []string{"keep:0.9", "keep:95%", "keep:", "keep:1e-400", "keep:-0", "keep:Inf%", "auto", "keep: 0x1p-2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, ok, err := ParseKeep(s)
		if err == nil && ok && !(k > 0 && k <= 1) {
			t.Fatalf("%q: accepted share %g", s, k)
		}
		if !ok && err != nil {
			t.Fatalf("%q: not a keep choice, yet an error %v", s, err)
		}
	})
}
