package configflag

import (
	"errors"
	"flag"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/flagbind"
)

// Flags are the fields of a flycl.Config bound to flags. The zero value is
// not usable: call New.
type Flags struct {
	cfg flycl.Config
	def flycl.Config // the defaults (New, NewWith)
	set *flagbind.Set
}

// New returns the flags of flycl.Config with flycl.DefaultConfig's
// values as defaults.
func New() *Flags { return NewWith(flycl.DefaultConfig()) }

// NewWith returns the flags of the named fields of flycl.Config (Go field
// names: "M", "Lambdas"; none names every field) with def's values as
// defaults, for a command that takes only some hyper-parameters, or that
// needs other defaults than the paper's (a benchmark's smaller m): the
// flags' names, help and checks are still flycl.Config's. The fields not
// bound keep def's values (Given). A name that is not a field of
// flycl.Config panics (a mistake of the program).
func NewWith(def flycl.Config, fields ...string) *Flags {
	f := &Flags{cfg: def, def: def}
	f.cfg.Lambdas, f.def.Lambdas = slices.Clone(def.Lambdas), slices.Clone(def.Lambdas)
	f.set = flagbind.MustBind(&f.cfg) // flycl.Config binds: TestEveryFieldHasAFlag
	if len(fields) > 0 {
		sub, err := f.set.Only(fields...)
		if err != nil {
			panic(err)
		}
		f.set = sub
	}
	return f
}

// Values returns the flags' values, to register on a pflag flag set
// (cobra's) as fs.VarPF(v, v.Flag, "", v.Help), with NoOptDefVal "true"
// when v.IsBool(). (This package does not import pflag: the Beam
// launcher, which uses the standard library's flags, does not build it.)
func (f *Flags) Values() []*flagbind.Value { return f.set.Values() }

// AddToGo registers the flags on a standard library flag set.
func (f *Flags) AddToGo(fs *flag.FlagSet) { f.set.AddToGo(fs) }

// Changed reports whether the user set the flag name.
func (f *Flags) Changed(name string) bool { return f.set.Changed(name) }

// Flag returns the flag of a flycl.Config field (a Go field name: "Seed"
// has "w-seed"), or "" when the field has none.
func (f *Flags) Flag(field string) string {
	if v := f.set.Field(field); v != nil {
		return v.Flag
	}
	return ""
}

// Names returns every flag's name, in flycl.Config's order.
func (f *Flags) Names() []string {
	var out []string
	for _, v := range f.set.Values() {
		out = append(out, v.Flag)
	}
	return out
}

// Given returns the flags' values as they are: the defaults, and what the
// user set, not yet completed or checked (Config).
func (f *Flags) Given() flycl.Config {
	c := f.cfg
	c.Lambdas = slices.Clone(c.Lambdas)
	return c
}

// Config returns the configuration the flags give, completed and checked
// (Resolve).
func (f *Flags) Config() (flycl.Config, error) { return f.Resolve(f.Given()) }

// Resolve completes cfg, the flags' configuration (Given) perhaps with
// some fields replaced by a command's own defaults, and checks it: a λ
// grid not given is the default one (New's: flycl.DefaultLambdas), or,
// when there is none or the λ scale is not the default's, the scale's
// (flycl.Config.WithDefaults). An invalid field is a *Error naming its
// flag and quoting its value ("--k 301: must be at most m (--m 300)").
func (f *Flags) Resolve(cfg flycl.Config) (flycl.Config, error) {
	cfg.Lambdas = slices.Clone(cfg.Lambdas)
	if !f.Changed("lambdas") {
		cfg.Lambdas = slices.Clone(f.def.Lambdas)
		if len(cfg.Lambdas) == 0 || cfg.LambdaScale != f.def.LambdaScale {
			cfg.Lambdas = flycl.Config{LambdaScale: cfg.LambdaScale}.WithDefaults().Lambdas
		}
	}
	err := cfg.Check()
	if err == nil && cfg.M > modelfile.MaxM {
		// a model file holds no larger m: refused before W (m·p
		// entries) and G (m² floats) are allocated for a model that
		// could never be saved
		err = &flycl.FieldError{Field: "M", Value: cfg.M, Problem: fmt.Sprintf("must be at most %d (the largest a model file holds)", modelfile.MaxM)}
	}
	return cfg, f.Explain(cfg, err)
}

// Validate checks cfg, a configuration the flags gave (Resolve), for
// d-dimensional features (flycl.Config.Validate: p at most d); an invalid
// field is a *Error naming its flag, as Resolve's.
func (f *Flags) Validate(cfg flycl.Config, d int) error {
	return f.Explain(cfg, cfg.Validate(d))
}

// Explain returns err, when it is a *flycl.FieldError of cfg (a library's
// check of it: flycl.Config.Validate), as a *Error naming the field's flag
// (a field without one here by its name in files: "k") and quoting cfg's
// value; any other err as it is.
func (f *Flags) Explain(cfg flycl.Config, err error) error {
	var fe *flycl.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	msg := fe.Describe(func(field string) string {
		if fl := f.Flag(field); fl != "" {
			return "--" + fl
		}
		return jsonName(field)
	}, func(field string) string { return flagbind.FieldText(cfg, field) })
	return &Error{msg: msg, Err: err}
}

// jsonName is a field's name in files (its JSON name: "k" for "K").
func jsonName(field string) string {
	sf, ok := reflect.TypeFor[flycl.Config]().FieldByName(field)
	if !ok {
		return field
	}
	name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
	return name
}

// Error is an invalid flag: its message names the flag and quotes the
// value given; it wraps the library's error (a *flycl.FieldError).
type Error struct {
	msg string
	Err error
}

func (e *Error) Error() string { return e.msg }

// Unwrap returns the library's error.
func (e *Error) Unwrap() error { return e.Err }

// Agree returns an error when a flag the user set differs from have, a
// configuration that is fixed already (what says whose: "the model has");
// the error is a *flagbind.MismatchError naming the first such flag
// ("--m 300, but the model has 200").
func (f *Flags) Agree(have flycl.Config, what string) error {
	return f.set.Agree(have, what)
}
