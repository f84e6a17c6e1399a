package flycl

import (
	"errors"
	"math"
	"testing"
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
	if err := c.Validate(299); err == nil || err.Error() != "flycl: p 300: must be at most the input dimension d=299" {
		t.Errorf("p > d: %v", err)
	}
	if err := c.Validate(0); err == nil {
		t.Error("d = 0 accepted")
	}
	if err := c.Validate(300); err != nil {
		t.Errorf("p = d: %v", err)
	}
}
