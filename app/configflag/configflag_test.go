package configflag

import (
	"errors"
	"flag"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/flagbind"
	"github.com/flycl/flycl/projection"
)

func parse(t *testing.T, args ...string) *Flags {
	t.Helper()
	f := New()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.AddToGo(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestEveryFieldHasAFlag: every field of flycl.Config is a flag with a
// help text, and with no flag given the configuration is
// flycl.DefaultConfig, field by field (compared by reflection, so a new
// field is compared too).
func TestEveryFieldHasAFlag(t *testing.T) {
	f := New()
	typ := reflect.TypeFor[flycl.Config]()
	if n := len(f.Names()); n != typ.NumField() {
		t.Errorf("%d flags for %d fields of flycl.Config", n, typ.NumField())
	}
	for i := range typ.NumField() {
		field := typ.Field(i)
		name := f.Flag(field.Name)
		if name == "" || field.Tag.Get("help") == "" {
			t.Errorf("flycl.Config.%s: flag %q, help %q", field.Name, name, field.Tag.Get("help"))
		}
	}
	got, err := f.Config()
	if err != nil {
		t.Fatal(err)
	}
	if want := flycl.DefaultConfig(); !reflect.DeepEqual(got, want) {
		t.Errorf("no flags give %+v, want flycl.DefaultConfig %+v", got, want)
	}
	// the help of --lambdas states the relative grid's default
	var grid []string
	for _, l := range flycl.DefaultRelativeLambdas {
		grid = append(grid, flagbind.FormatFloat(l))
	}
	if h := f.set.Lookup("lambdas").Help; !strings.Contains(h, strings.Join(grid, ",")) {
		t.Errorf("--lambdas help %q does not give the relative default %s", h, strings.Join(grid, ","))
	}
}

// TestResolve: the flags give their configuration; an invalid one is an
// error naming the flag and quoting the value given (and the bound's
// flag); the grid not given follows the λ scale.
func TestResolve(t *testing.T) {
	f := parse(t, "--m", "500", "--k", "100", "--topk", "magnitude", "--w-seed", "4", "--widen-grid", "--lambda-scale", "relative")
	cfg, err := f.Config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.M != 500 || cfg.K != 100 || cfg.P != 300 || cfg.TopK != projection.Magnitude || cfg.Seed != 4 || !cfg.WidenGrid ||
		!slices.Equal(cfg.Lambdas, flycl.DefaultRelativeLambdas) {
		t.Errorf("got %+v", cfg)
	}
	if cfg, _ := parse(t, "--lambda-scale", "relative", "--lambdas", "2,3").Config(); !slices.Equal(cfg.Lambdas, []float64{2, 3}) {
		t.Errorf("a given grid with the relative scale: %v", cfg.Lambdas)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--m", "0"}, "--m 0: must be at least 1"},
		{[]string{"--p", "-1"}, "--p -1: must be at least 1"},
		{[]string{"--m", "300", "--k", "301"}, "--k 301: must be at most m (--m 300)"},
		{[]string{"--lambdas", "1,0"}, "--lambdas 1,0: 0 is not a positive finite number"},
		{[]string{"--lambdas", "1e6,+Inf"}, "--lambdas 1e6,+Inf: +Inf is not a positive finite number"},
		// an m no model file holds: refused before W and G are allocated
		// (it was an out-of-memory crash)
		{[]string{"--m", "99999999999"}, "--m 99999999999: must be at most 131072 (the largest a model file holds)"},
	} {
		_, err := parse(t, tc.args...).Config()
		var fe *flycl.FieldError
		if err == nil || err.Error() != tc.want || !errors.As(err, &fe) {
			t.Errorf("%v: %v, want %q wrapping a *flycl.FieldError", tc.args, err, tc.want)
		}
	}
	// Resolve checks the configuration as a command completed it
	f = parse(t, "--k", "900")
	g := f.Given()
	g.M = 800
	if _, err := f.Resolve(g); err == nil || err.Error() != "--k 900: must be at most m (--m 800)" {
		t.Errorf("k above a command's m: %v", err)
	}
}

// TestAgree: the flags the user set must agree with a configuration that
// is fixed (a model's); the others are not compared.
func TestAgree(t *testing.T) {
	have := flycl.Config{M: 200, P: 3, K: 60, Lambdas: []float64{1, 10}, GCVScope: flycl.GCVAll}
	for _, tc := range []struct {
		args []string
		want string // "" agrees
	}{
		{nil, ""},
		{[]string{"--m", "200", "--lambdas", "1,1e1", "--gcv-scope", "all"}, ""},
		{[]string{"--m", "300", "--k", "60"}, "--m 300, but the model has 200"},
		{[]string{"--k", "10"}, "--k 10, but the model has 60"},
		{[]string{"--gcv-scope", "task"}, "--gcv-scope task, but the model has all"},
		{[]string{"--lambdas", "1,100"}, "--lambdas 1,100, but the model has 1,10"},
		{[]string{"--widen-grid"}, "--widen-grid true, but the model has false"},
	} {
		err := parse(t, tc.args...).Agree(have, "the model has")
		var me *flagbind.MismatchError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want || !errors.As(err, &me)):
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestNewWith: a command's subset of the flags, with its own defaults:
// only the named flags exist, their help is flycl.Config's, the defaults
// are the command's (an unbound field keeps its value), a grid not given
// is the default's or, with another λ scale or none, the scale's, and an
// error names the flag, or a field without one by its name in files.
func TestNewWith(t *testing.T) {
	def := flycl.Config{M: 2000, P: 300, K: 600, LambdaScale: flycl.LambdaRelative}
	f := NewWith(def, "K", "M", "Lambdas")
	if got := strings.Join(f.Names(), ","); got != "m,k,lambdas" {
		t.Errorf("flags %s, want m,k,lambdas", got)
	}
	all := New()
	for _, v := range f.Values() {
		if w := all.set.Lookup(v.Flag).Help; v.Help != w {
			t.Errorf("--%s help %q, want flycl.Config's %q", v.Flag, v.Help, w)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.AddToGo(fs)
	if err := fs.Parse([]string{"--m", "1000"}); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--p", "3"}); err == nil {
		t.Error("--p accepted: not one of the named fields")
	}
	cfg, err := f.Config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.M != 1000 || cfg.K != 600 || cfg.P != 300 || cfg.LambdaScale != flycl.LambdaRelative || !slices.Equal(cfg.Lambdas, flycl.DefaultRelativeLambdas) {
		t.Errorf("got %+v", cfg)
	}
	// a default grid is kept while the scale is the default's
	g := NewWith(flycl.Config{M: 10, P: 1, K: 3, Lambdas: []float64{5, 6}}, "M", "Lambdas", "LambdaScale")
	if cfg, _ := g.Config(); !slices.Equal(cfg.Lambdas, []float64{5, 6}) {
		t.Errorf("default grid: %v", cfg.Lambdas)
	}
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	g.AddToGo(fs)
	if err := fs.Parse([]string{"--lambda-scale", "relative"}); err != nil {
		t.Fatal(err)
	}
	if cfg, _ := g.Config(); !slices.Equal(cfg.Lambdas, flycl.DefaultRelativeLambdas) {
		t.Errorf("another scale: %v", cfg.Lambdas)
	}
	// k is not a flag here: named by its name in files
	h := NewWith(flycl.Config{M: 10, P: 1, K: 8}, "M")
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	h.AddToGo(fs)
	if err := fs.Parse([]string{"--m", "5"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Config(); err == nil || err.Error() != "k 8: must be at most m (--m 5)" {
		t.Errorf("k above --m: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("NewWith of a field flycl.Config does not have did not panic")
		}
	}()
	NewWith(def, "Nope")
}

// TestValidate: p above the features' dimension names --p, quotes the
// value and suggests one (flycl.Config.Validate).
func TestValidate(t *testing.T) {
	f := parse(t, "--p", "7")
	cfg, err := f.Config()
	if err != nil {
		t.Fatal(err)
	}
	err = f.Validate(cfg, 6)
	var fe *flycl.FieldError
	if err == nil || !strings.HasPrefix(err.Error(), "--p 7: must be at most 6, the input dimension d=6") || !errors.As(err, &fe) {
		t.Errorf("p > d: %v", err)
	}
	if err := f.Validate(cfg, 7); err != nil {
		t.Errorf("p = d: %v", err)
	}
	if err := f.Validate(cfg, 0); !errors.Is(err, flycl.ErrBadInput) {
		t.Errorf("d = 0: %v", err)
	}
}
