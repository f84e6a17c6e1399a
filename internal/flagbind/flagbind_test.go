package flagbind

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// mode is an enumeration written by its name.
type mode int

func (m mode) MarshalText() ([]byte, error) {
	if m < 0 || m > 1 {
		return nil, fmt.Errorf("invalid mode %d", int(m))
	}
	return []byte([]string{"fast", "exact"}[m]), nil
}

func (m *mode) UnmarshalText(b []byte) error {
	switch string(b) {
	case "fast":
		*m = 0
	case "exact":
		*m = 1
	default:
		return fmt.Errorf("unknown mode %q", b)
	}
	return nil
}

type settings struct {
	N     int       `flag:"n" help:"count"`
	Seed  uint64    `flag:"seed" help:"seed"`
	Rate  float64   `flag:"rate" help:"rate"`
	On    bool      `flag:"on" help:"switch"`
	Name  string    `flag:"name" help:"name"`
	Grid  []float64 `flag:"grid" help:"grid"`
	Mode  mode      `flag:"mode" help:"mode"`
	Skip  int       `flag:"-"`
	other int
}

func defaults() settings {
	return settings{N: 3, Seed: 9, Rate: 0.5, Name: "x", Grid: []float64{1e6, 0.01}, Mode: 1}
}

// TestBindBothFlagPackages: the same struct bound to pflag and to the
// standard library's flags has the struct's values as defaults, parses
// every kind of field, and knows which flags were set.
func TestBindBothFlagPackages(t *testing.T) {
	args := []string{"--n", "7", "--seed", "0x10", "--rate", "2.5", "--on", "--name", "y", "--grid", "1, 1e-3", "--mode", "fast"}
	want := settings{N: 7, Seed: 16, Rate: 2.5, On: true, Name: "y", Grid: []float64{1, 1e-3}, Mode: 0}
	for _, pkg := range []string{"pflag", "flag"} {
		s := defaults()
		b, err := Bind(&s)
		if err != nil {
			t.Fatal(err)
		}
		var parse func([]string) error
		var def func(string) string
		switch pkg {
		case "pflag":
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			for _, v := range b.Values() {
				f := fs.VarPF(v, v.Flag, "", v.Help)
				if v.IsBool() {
					f.NoOptDefVal = "true"
				}
			}
			parse, def = fs.Parse, func(n string) string { return fs.Lookup(n).DefValue }
		case "flag":
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			b.AddToGo(fs)
			parse, def = fs.Parse, func(n string) string { return fs.Lookup(n).DefValue }
		}
		for name, d := range map[string]string{"n": "3", "seed": "9", "rate": "0.5", "on": "false", "name": "x", "grid": "1e6,0.01", "mode": "exact"} {
			if got := def(name); got != d {
				t.Errorf("%s: --%s default %q, want %q", pkg, name, got, d)
			}
		}
		if b.Lookup("skip") != nil || len(b.Values()) != 7 {
			t.Errorf("%s: bound %d fields, want 7 (Skip and other left out)", pkg, len(b.Values()))
		}
		if b.Changed("n") {
			t.Errorf("%s: --n changed before parsing", pkg)
		}
		if err := parse(args[:2]); err != nil {
			t.Fatal(err)
		}
		if !b.Changed("n") || b.Changed("seed") {
			t.Errorf("%s: after --n only, changed n=%v seed=%v", pkg, b.Changed("n"), b.Changed("seed"))
		}
		if err := parse(args); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(s) != fmt.Sprint(want) {
			t.Errorf("%s: parsed %+v, want %+v", pkg, s, want)
		}
		// the text as given while the field holds its value
		if got := b.Lookup("grid").String(); got != "1, 1e-3" {
			t.Errorf("%s: --grid reads back %q", pkg, got)
		}
		s.Grid = []float64{5}
		if got := b.Lookup("grid").String(); got != "5" {
			t.Errorf("%s: --grid after the field changed reads %q", pkg, got)
		}
		for _, bad := range [][]string{{"--n", "1.5"}, {"--mode", "slow"}, {"--grid", "1,x"}, {"--on=maybe"}} {
			if err := parse(bad); err == nil {
				t.Errorf("%s: %v accepted", pkg, bad)
			}
		}
	}
}

// TestPflagUsage: pflag describes a bound field as it describes its own
// flag of the same Go type (the type's name, the default, quoting, no
// default when it is the zero value).
func TestPflagUsage(t *testing.T) {
	s := defaults()
	s.Seed = 0 // a zero default is not printed
	b := MustBind(&s)
	bound := pflag.NewFlagSet("t", pflag.ContinueOnError)
	for _, v := range b.Values() {
		f := bound.VarPF(v, v.Flag, "", v.Help)
		if v.IsBool() {
			f.NoOptDefVal = "true"
		}
	}
	own := pflag.NewFlagSet("t", pflag.ContinueOnError)
	d := defaults()
	d.Seed = 0
	own.IntVar(&d.N, "n", d.N, "count")
	own.Uint64Var(&d.Seed, "seed", d.Seed, "seed")
	own.Float64Var(&d.Rate, "rate", d.Rate, "rate")
	own.BoolVar(&d.On, "on", d.On, "switch")
	own.StringVar(&d.Name, "name", d.Name, "name")
	grid, m := "1e6,0.01", "exact"
	own.StringVar(&grid, "grid", grid, "grid")
	own.StringVar(&m, "mode", m, "mode")
	if got, want := bound.FlagUsages(), own.FlagUsages(); got != want {
		t.Errorf("usage\n%s\nwant (pflag's own flags)\n%s", got, want)
	}
}

// TestAgree: only the flags the user set are compared, as their flag
// text, and the first that differs is named with both values.
func TestAgree(t *testing.T) {
	s := defaults()
	b := MustBind(&s)
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	b.AddToGo(fs)
	have := defaults()
	have.N, have.Rate = 4, 0.25 // differ, but not set: agree
	if err := b.Agree(have, "the file has"); err != nil {
		t.Fatalf("nothing set: %v", err)
	}
	if err := fs.Parse([]string{"--grid", "1000000,1e-2", "--mode", "exact"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Agree(&have, "the file has"); err != nil {
		t.Fatalf("equal values written otherwise: %v", err)
	}
	if err := fs.Parse([]string{"--n", "5"}); err != nil {
		t.Fatal(err)
	}
	err := b.Agree(have, "the file has")
	var me *MismatchError
	if !errors.As(err, &me) || me.Flag != "n" || err.Error() != "--n 5, but the file has 4" {
		t.Fatalf("--n 5 against 4: %v", err)
	}
	have.N = 5
	have.Grid = []float64{1e6}
	if err := b.Agree(have, "the file has"); err == nil || err.Error() != "--grid 1e6,0.01, but the file has 1e6" {
		t.Fatalf("--grid against a shorter grid: %v", err)
	}
	if err := b.Agree(struct{ N int }{5}, "x"); !errors.Is(err, ErrTag) {
		t.Errorf("another type: %v", err)
	}
	if err := b.Agree((*settings)(nil), "x"); !errors.Is(err, ErrTag) {
		t.Errorf("nil: %v", err)
	}
}

// TestBindRefuses: a struct that cannot be bound is an error naming the
// field, never a silently missing flag.
func TestBindRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		ptr  any
		want string
	}{
		"no tag": {&struct{ A int }{}, "A has no flag tag"},
		"unsupported": {&struct {
			A map[string]int `flag:"a"`
		}{}, "A: type"},
		"twice": {&struct {
			A int `flag:"a"`
			B int `flag:"a"`
		}{}, "used twice"},
		"not a pointer": {struct{}{}, "not a pointer"},
	} {
		_, err := Bind(tc.ptr)
		if !errors.Is(err, ErrTag) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

// helped is a struct whose help of one flag is completed by FlagHelp.
type helped struct {
	N    int       `flag:"n" help:"count"`
	Grid []float64 `flag:"grid" help:"grid"`
}

func (helped) FlagHelp(field, tag string) string {
	if field == "Grid" {
		return tag + " (default 1,2)"
	}
	return tag
}

// TestHelper: a struct that is a Helper completes its flags' help; the
// others keep the tag.
func TestHelper(t *testing.T) {
	var h helped
	s := MustBind(&h)
	if got := s.Lookup("grid").Help; got != "grid (default 1,2)" {
		t.Errorf("grid help %q", got)
	}
	if got := s.Lookup("n").Help; got != "count" {
		t.Errorf("n help %q", got)
	}
}

// TestOnly: a subset binds only the named fields, in the struct's order,
// shares their values with the whole set, and refuses a field not bound.
func TestOnly(t *testing.T) {
	st := defaults()
	all := MustBind(&st)
	sub, err := all.Only("Mode", "N")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range sub.Values() {
		names = append(names, v.Flag)
	}
	if strings.Join(names, ",") != "n,mode" {
		t.Errorf("flags %v, want n,mode (the struct's order)", names)
	}
	if sub.Lookup("seed") != nil || sub.Field("Seed") != nil {
		t.Error("the subset has --seed")
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	sub.AddToGo(fs)
	if err := fs.Parse([]string{"--n", "5"}); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--seed", "5"}); err == nil {
		t.Error("--seed parsed by the subset's flag set")
	}
	if st.N != 5 || !sub.Changed("n") || !all.Changed("n") || st.Seed != 9 {
		t.Errorf("after --n 5: %+v, changed %v %v", st, sub.Changed("n"), all.Changed("n"))
	}
	for _, bad := range [][]string{{"Nope"}, {"Skip"}, {"other"}} {
		if _, err := all.Only(bad...); !errors.Is(err, ErrTag) {
			t.Errorf("Only(%v): %v, want ErrTag", bad, err)
		}
	}
}

// TestNames: flag tags of nested structs by dotted path, an arg tag as it
// is, untagged and "-" fields left out, the first struct winning a path
// two structs have, and a pointer taken as its struct.
func TestNames(t *testing.T) {
	type inner struct {
		Dir   string `flag:"save-dir"`
		Every int
	}
	type a struct {
		Files  []string `arg:"IMAGE..."`
		Model  string   `flag:"model"`
		Hidden string   `flag:"-"`
		Save   inner
		plain  int
	}
	type b struct {
		Model  string `flag:"other"`
		Config string `flag:"config"`
	}
	got := Names(&a{}, b{})
	want := map[string]string{"Files": "IMAGE...", "Model": "--model", "Save.Dir": "--save-dir", "Config": "--config"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Names: %v, want %v", got, want)
	}
	_ = a{}.plain
}
