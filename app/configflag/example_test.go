package configflag_test

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/configflag"
)

// register binds the flags to a pflag flag set (cobra's c.Flags()): a
// bool flag needs no value (--widen-grid alone turns it on).
func register(f *configflag.Flags, fs *pflag.FlagSet) {
	for _, v := range f.Values() {
		fl := fs.VarPF(v, v.Flag, "", v.Help)
		if v.IsBool() {
			fl.NoOptDefVal = "true"
		}
	}
}

// A command's Fly-CL flags: every field of flycl.Config as a flag on a
// pflag flag set, the arguments parsed, and the configuration they give,
// completed (defaults for what was not set) and checked. A value the
// configuration refuses is a *configflag.Error naming the flag and
// quoting the value, wrapping the library's *flycl.FieldError.
func ExampleFlags() {
	for _, args := range [][]string{
		{"--m", "500", "--k", "100", "--w-seed", "4", "--widen-grid"},
		{"--m", "300", "--k", "301"},
	} {
		f := configflag.New()
		fs := pflag.NewFlagSet("learn", pflag.ContinueOnError)
		register(f, fs)
		if err := fs.Parse(args); err != nil {
			fmt.Println(err)
			continue
		}
		cfg, err := f.Config()
		var ferr *configflag.Error
		var field *flycl.FieldError
		switch {
		case errors.As(err, &ferr) && errors.As(err, &field):
			fmt.Printf("refused: %v (field %s)\n", ferr, field.Field)
		case err != nil:
			fmt.Println(err)
		default:
			fmt.Printf("m=%d p=%d k=%d seed=%d widen=%v; set: m %v, p %v\n",
				cfg.M, cfg.P, cfg.K, cfg.Seed, cfg.WidenGrid, f.Changed("m"), f.Changed("p"))
		}
	}
	// Output:
	// m=500 p=300 k=100 seed=4 widen=true; set: m true, p false
	// refused: --k 301: must be at most m (--m 300) (field K)
}

// A configuration fixed already (an existing model's) and the flags the
// user set must agree; the flags not set are not compared.
func ExampleFlags_AgreeModel() {
	have := flycl.Config{M: 200, P: 3, K: 60, Lambdas: []float64{1, 10}}
	for _, args := range [][]string{{"--m", "200"}, {"--m", "300"}} {
		f := configflag.New()
		fs := pflag.NewFlagSet("learn", pflag.ContinueOnError)
		register(f, fs)
		if err := fs.Parse(args); err != nil {
			fmt.Println(err)
			continue
		}
		err := f.AgreeModel(have)
		fmt.Printf("%v: %v (fixed: %v)\n", args, err, errors.Is(err, configflag.ErrFixed))
	}
	// Output:
	// [--m 200]: <nil> (fixed: false)
	// [--m 300]: --m 300, but the model has 200: a model's configuration is fixed when it is created (fixed: true)
}

// A command that takes only some hyper-parameters, with its own defaults
// (a benchmark's smaller m), on the standard library's flags: the fields
// not bound keep the defaults, and the checks still name the flags.
func ExampleNewWith() {
	def := flycl.DefaultConfig()
	def.M, def.P, def.K = 64, 4, 16
	f := configflag.NewWith(def, "M", "K")
	fmt.Println(f.Names())

	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.AddToGo(fs)
	if err := fs.Parse([]string{"-k", "32"}); err != nil {
		fmt.Println(err)
		return
	}
	cfg, err := f.Config()
	fmt.Println(cfg.M, cfg.P, cfg.K, err)

	fmt.Println(fs.Parse([]string{"-p", "8"})) // not bound

	if err := fs.Parse([]string{"-k", "100"}); err != nil {
		fmt.Println(err)
		return
	}
	_, err = f.Config()
	fmt.Println(err)
	// Output:
	// [m k]
	// 64 4 32 <nil>
	// flag provided but not defined: -p
	// --k 100: must be at most m (--m 64)
}
