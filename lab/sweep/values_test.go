package sweep

import (
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/projection"
)

func TestParseValues(t *testing.T) {
	cfg := flycl.DefaultConfig()
	cfg.M, cfg.K = 1000, 100
	for _, c := range []struct {
		param, values string
		want          []int
		err           string
	}{
		{"k", "10, 20,30", []int{10, 20, 30}, ""},
		{"m", "50,2000", []int{50, 2000}, ""}, // k lowered to m: allowed
		{"k", "10,x", nil, `--values 10,x: "x" is not an integer`},
		{"k", "", nil, `"" is not an integer`},
		{"k", "2000", nil, "--param k --values 2000: sweep: flycl: k 2000: must be at most m (m 1000)"},
		{"p", "0", nil, "--param p --values 0"},
		{"q", "1", nil, `parameter "q"`},
	} {
		vs, err := ParseValues(cfg, c.param, c.values)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %q: %v, want %q", c.param, c.values, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(vs, c.want) {
			t.Errorf("%s %q: %v, %v; want %v", c.param, c.values, vs, err, c.want)
		}
	}
}

// TestSweepCheckDim: a sweep is refused exactly when one of its
// configurations has no W for d-dimensional features
// (projection.Generate, the independent truth).
func TestSweepCheckDim(t *testing.T) {
	cfg := flycl.DefaultConfig()
	cfg.M, cfg.P, cfg.K = 20, 4, 5
	const d = 8
	for _, c := range []struct {
		param string
		vs    []int
	}{
		{"p", []int{2, 8}}, {"p", []int{2, 9}}, {"m", []int{3, 40}}, {"k", []int{1, 20}},
	} {
		var gerr error
		for _, v := range c.vs {
			w, _ := With(cfg, c.param, v)
			if _, err := projection.Generate(w.M, d, w.P, 1); err != nil && gerr == nil {
				gerr = err
			}
		}
		err := CheckDim(cfg, c.param, c.vs, d)
		if (err == nil) != (gerr == nil) {
			t.Errorf("%s %v: CheckDim %v, Generate %v", c.param, c.vs, err, gerr)
		}
	}
}
