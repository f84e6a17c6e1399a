package flycl

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/flycl/flycl/projection"
)

// TestConfigCheck: every invalid field is a *FieldError naming the field
// (by its Go name, and in the message by its name in files) and its
// value; the defaults are valid, and p is checked against d by Validate
// only.
func TestConfigCheck(t *testing.T) {
	if err := DefaultConfig().Check(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(*Config)
		field  string
		msg    string
	}{
		{"m", func(c *Config) { c.M = 0 }, "M", "flycl: m 0: must be at least 1"},
		{"p", func(c *Config) { c.P = -2 }, "P", "flycl: p -2: must be at least 1"},
		{"k", func(c *Config) { c.K = 0 }, "K", "flycl: k 0: must be at least 1"},
		{"k above m", func(c *Config) { c.M, c.K = 100, 101 }, "K", "flycl: k 101: must be at most m (m 100)"},
		{"λ zero", func(c *Config) { c.Lambdas = []float64{1, 0} }, "Lambdas", "flycl: lambdas [1 0]: 0 is not a positive finite number"},
		{"λ NaN", func(c *Config) { c.Lambdas = []float64{math.NaN()} }, "Lambdas", "flycl: lambdas [NaN]: NaN is not a positive finite number"},
		{"λ Inf", func(c *Config) { c.Lambdas = []float64{math.Inf(1)} }, "Lambdas", "flycl: lambdas [+Inf]: +Inf is not a positive finite number"},
		{"scope", func(c *Config) { c.GCVScope = 7 }, "GCVScope", "flycl: gcv_scope 7: unknown GCV scope"},
		{"scale", func(c *Config) { c.LambdaScale = -1 }, "LambdaScale", "flycl: lambda_scale -1: unknown lambda scale"},
	} {
		c := DefaultConfig()
		tc.change(&c)
		err := c.Check()
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || err.Error() != tc.msg {
			t.Errorf("%s: %v, want a *FieldError for %s: %q", tc.name, err, tc.field, tc.msg)
		}
		if err2 := c.Validate(1000); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("%s: Validate %v, Check %v", tc.name, err2, err)
		}
	}
	c := DefaultConfig()
	if err := c.Validate(299); err == nil || err.Error() != "flycl: p 300: must be at most 299, the input dimension d=299 (W cannot have more non-zeros per row than the features have dimensions; the paper keeps p/d ≈ 0.4: 117 for d=299)" {
		t.Errorf("p > d: %v", err)
	}
	if err := c.Validate(0); err == nil || !errors.Is(err, ErrBadInput) {
		t.Errorf("d = 0: %v, want an ErrBadInput", err)
	}
	if err := c.Validate(300); err != nil {
		t.Errorf("p = d: %v", err)
	}
}

// TestValidateAgainstGenerate: Validate refuses exactly the p for which
// no W can be drawn (projection.Generate, the independent truth), and the
// p its error suggests can be.
func TestValidateAgainstGenerate(t *testing.T) {
	for d := 1; d <= 12; d++ {
		for p := 1; p <= 14; p++ {
			cfg := Config{M: 4, P: p, K: 1}
			err := cfg.Validate(d)
			_, gerr := projection.Generate(cfg.M, d, p, 1)
			if (err == nil) != (gerr == nil) {
				t.Fatalf("d=%d p=%d: Validate %v, Generate %v", d, p, err, gerr)
			}
			if err == nil {
				continue
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != "P" {
				t.Fatalf("d=%d p=%d: %v, want a *FieldError for P", d, p, err)
			}
			suggested := max(1, int(math.Round(0.39*float64(d))))
			if !strings.Contains(err.Error(), fmt.Sprintf("%d for d=%d", suggested, d)) {
				t.Fatalf("d=%d: %q does not suggest p=%d", d, err, suggested)
			}
			if _, err := projection.Generate(cfg.M, d, suggested, 1); err != nil {
				t.Fatalf("d=%d: suggested p=%d cannot be drawn: %v", d, suggested, err)
			}
		}
	}
}

// TestKForM: k = 0.3·m rounded, at least 1, never above m, and the
// default configuration's k is that of its m.
func TestKForM(t *testing.T) {
	for _, tc := range []struct{ m, k int }{{1, 1}, {2, 1}, {3, 1}, {5, 2}, {1000, 300}, {2000, 600}, {3000, 900}, {10000, 3000}, {1005, 302}} {
		if got := KForM(tc.m); got != tc.k {
			t.Errorf("KForM(%d) = %d, want %d", tc.m, got, tc.k)
		}
	}
	for m := 1; m < 50; m++ {
		if k := KForM(m); k < 1 || k > m {
			t.Errorf("KForM(%d) = %d, outside [1, m]", m, k)
		}
	}
	if d := DefaultConfig(); d.K != KForM(d.M) || d.K != 3000 {
		t.Errorf("DefaultConfig k %d, m %d", d.K, d.M)
	}
}

// TestFlagHelp: the help of the grid's flag gives the relative grid's
// default from DefaultRelativeLambdas; other fields keep their tag.
func TestFlagHelp(t *testing.T) {
	if h := (Config{}).FlagHelp("Lambdas", "GCV grid"); h != "GCV grid (with --lambda-scale relative the default is 0.01,0.1,1,10,100,1000,10000)" {
		t.Errorf("Lambdas: %q", h)
	}
	if h := (Config{}).FlagHelp("M", "tag"); h != "tag" {
		t.Errorf("M: %q", h)
	}
}
