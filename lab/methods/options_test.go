package methods

import (
	"math"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/projection"
)

func TestOptionsCheck(t *testing.T) {
	ok := Options{OnlineBatch: 1000, HebbianPasses: 100}
	for _, c := range []struct {
		name string
		edit func(*Options)
		err  string
	}{
		{"defaults", func(*Options) {}, ""},
		{"fixed lambda", func(o *Options) { o.OnlineLambda = 1e3 }, ""},
		{"one pass", func(o *Options) { o.HebbianPasses = 1 }, ""},
		{"no passes", func(o *Options) { o.HebbianPasses = 0 }, "--hebbian-passes 0"},
		{"no batch", func(o *Options) { o.OnlineBatch = 0 }, "--online-batch 0"},
		{"negative batch", func(o *Options) { o.OnlineBatch = -3 }, "--online-batch -3"},
		{"negative lambda", func(o *Options) { o.OnlineLambda = -1 }, "--online-lambda -1"},
		{"NaN lambda", func(o *Options) { o.OnlineLambda = math.NaN() }, "--online-lambda NaN"},
		{"infinite lambda", func(o *Options) { o.OnlineLambda = math.Inf(1) }, "--online-lambda +Inf"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := ok
			c.edit(&o)
			err := o.Check()
			if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Fatalf("Check() = %v, want %q", err, c.err)
			}
		})
	}
}

// TestUseW: m and p become the W's; k beyond the W's rows is refused,
// naming the file.
func TestUseW(t *testing.T) {
	w, err := projection.Generate(50, 20, 8, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, 50, 51} {
		o := Options{FlyCL: flycl.DefaultConfig()}
		o.FlyCL.K = k
		err := o.UseW(w, "w.npz")
		if o.W != w || o.FlyCL.M != 50 || o.FlyCL.P != 8 {
			t.Errorf("k=%d: W %p m=%d p=%d, want %p 50 8", k, o.W, o.FlyCL.M, o.FlyCL.P, w)
		}
		if want := k > 50; (err != nil) != want || err != nil && !strings.Contains(err.Error(), "w.npz") {
			t.Errorf("k=%d: %v, want an error naming w.npz: %v", k, err, want)
		}
	}
}

// TestCheckDim: CheckDim refuses exactly the configurations for which no
// W can be drawn (projection.Generate, the independent truth), and its
// suggestion is a p that can be.
func TestCheckDim(t *testing.T) {
	for d := 1; d <= 12; d++ {
		for p := 1; p <= 14; p++ {
			cfg := flycl.DefaultConfig()
			cfg.M, cfg.P = 4, p
			err := CheckDim(cfg, d)
			_, gerr := projection.Generate(cfg.M, d, p, 1)
			if (err == nil) != (gerr == nil) {
				t.Fatalf("d=%d p=%d: CheckDim %v, Generate %v", d, p, err, gerr)
			}
			if err == nil {
				continue
			}
			suggested := max(1, int(math.Round(0.39*float64(d))))
			if _, err := projection.Generate(cfg.M, d, suggested, 1); err != nil {
				t.Fatalf("d=%d: suggested p=%d cannot be drawn: %v", d, suggested, err)
			}
		}
	}
}
