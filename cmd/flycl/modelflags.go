package main

import (
	"github.com/spf13/pflag"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/configflag"
)

// modelFlags are Fly-CL's hyper-parameters on the command line:
// flycl.Config's fields as flags (configflag), with their names, help and
// validation from flycl.Config and their defaults from
// flycl.DefaultConfig, the one place they are written.
type modelFlags struct {
	flags *configflag.Flags
}

func (f *modelFlags) register(fs *pflag.FlagSet) {
	for _, v := range f.bound().Values() {
		fl := fs.VarPF(v, v.Flag, "", v.Help)
		if v.IsBool() {
			fl.NoOptDefVal = "true" // --widen-grid alone turns it on
		}
	}
}

// bound returns the flags, made on first use (a modelFlags never
// registered gives the defaults).
func (f *modelFlags) bound() *configflag.Flags {
	if f.flags == nil {
		f.flags = configflag.New()
	}
	return f.flags
}

// config checks the flags and returns the configuration they give
// (configflag.Flags.Config). Every error quotes the value given.
func (f *modelFlags) config() (flycl.Config, error) {
	return f.bound().Config()
}

// someModelFlags returns the model flags of the named fields of
// flycl.Config alone, with def's values as defaults
// (configflag.NewWith), for a command that takes some hyper-parameters
// (a benchmark): their help and checks are still flycl.Config's.
func someModelFlags(def flycl.Config, fields ...string) *modelFlags {
	return &modelFlags{flags: configflag.NewWith(def, fields...)}
}

// given returns the flags' values, not completed or checked
// (configflag.Flags.Given).
func (f *modelFlags) given() flycl.Config { return f.bound().Given() }

// explain names the flags in err, a library's check of cfg
// (configflag.Flags.Explain).
func (f *modelFlags) explain(cfg flycl.Config, err error) error {
	return f.bound().Explain(cfg, err)
}

// validate checks cfg, the flags' configuration, for d-dimensional
// features (configflag.Flags.Validate: p at most d), naming the flags.
func (f *modelFlags) validate(cfg flycl.Config, d int) error {
	return f.bound().Validate(cfg, d)
}
