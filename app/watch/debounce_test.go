package watch

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// debounceRef is the definition, by brute force: frame i is a change to X
// when its last n answers are all X and X is not the answer confirmed
// before it.
func debounceRef(answers []string, n int) []Change {
	var out []Change
	current, has := "", false
	for i := range answers {
		if i+1 < n {
			continue
		}
		x := answers[i]
		all := true
		for _, a := range answers[i-n+1 : i+1] {
			all = all && a == x
		}
		if all && (!has || x != current) {
			since := i - n + 1
			for since > 0 && answers[since-1] == x { // the run of x ending at i
				since--
			}
			out = append(out, Change{From: current, To: x, Since: since, Frame: i})
			current, has = x, true
		}
	}
	return out
}

func TestDebouncer(t *testing.T) {
	cases := []struct {
		n       int
		answers string
		want    []Change
	}{
		{1, "aab", []Change{{"", "a", 0, 0}, {"a", "b", 2, 2}}},
		{2, "abab", nil},
		{3, "aaabbabbb", []Change{{"", "a", 0, 2}, {"a", "b", 6, 8}}},
		{2, "aabbbcca", []Change{{"", "a", 0, 1}, {"a", "b", 2, 3}, {"b", "c", 5, 6}}},
		{0, "ab", []Change{{"", "a", 0, 0}, {"a", "b", 1, 1}}}, // n < 1 is 1
	}
	for _, c := range cases {
		d := NewDebouncer(c.n)
		var got []Change
		for i, a := range c.answers {
			if ch, ok := d.Observe(i, string(a)); ok {
				got = append(got, ch)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("n=%d %q: %v, want %v", c.n, c.answers, got, c.want)
		}
	}
	// random sequences against the brute-force definition
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 2000 {
		n := 1 + rng.IntN(4)
		answers := make([]string, rng.IntN(40))
		for i := range answers {
			answers[i] = string(rune('a' + rng.IntN(3)))
		}
		d := NewDebouncer(n)
		var got []Change
		for i, a := range answers {
			if ch, ok := d.Observe(i, a); ok {
				got = append(got, ch)
			}
		}
		if want := debounceRef(answers, n); !slices.Equal(got, want) {
			t.Fatalf("trial %d n=%d %v: %v, want %v", trial, n, answers, got, want)
		}
	}
}
