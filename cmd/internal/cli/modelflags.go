package cli

import (
	"github.com/spf13/pflag"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/configflag"
)

// ModelFlags are Fly-CL's hyper-parameters on the command line:
// flycl.Config's fields as flags (configflag), with their names, help and
// validation from flycl.Config and their defaults from
// flycl.DefaultConfig, the one place they are written.
type ModelFlags struct {
	flags *configflag.Flags
}

func (f *ModelFlags) Register(fs *pflag.FlagSet) {
	for _, v := range f.Bound().Values() {
		fl := fs.VarPF(v, v.Flag, "", v.Help)
		if v.IsBool() {
			fl.NoOptDefVal = "true" // --widen-grid alone turns it on
		}
	}
}

// Bound returns the flags, made on first use (a ModelFlags never
// registered gives the defaults).
func (f *ModelFlags) Bound() *configflag.Flags {
	if f.flags == nil {
		f.flags = configflag.New()
	}
	return f.flags
}

// Config checks the flags and returns the configuration they give
// (configflag.Flags.Config). Every error quotes the value given.
func (f *ModelFlags) Config() (flycl.Config, error) {
	return f.Bound().Config()
}

// SomeModelFlags returns the model flags of the named fields of
// flycl.Config alone, with def's values as defaults
// (configflag.NewWith), for a command that takes some hyper-parameters
// (a benchmark): their help and checks are still flycl.Config's.
func SomeModelFlags(def flycl.Config, fields ...string) *ModelFlags {
	return &ModelFlags{flags: configflag.NewWith(def, fields...)}
}

// Given returns the flags' values, not completed or checked
// (configflag.Flags.Given).
func (f *ModelFlags) Given() flycl.Config { return f.Bound().Given() }

// Explain names the flags in err, a library's check of cfg
// (configflag.Flags.Explain).
func (f *ModelFlags) Explain(cfg flycl.Config, err error) error {
	return f.Bound().Explain(cfg, err)
}

// Validate checks cfg, the flags' configuration, for d-dimensional
// features (configflag.Flags.Validate: p at most d), naming the flags.
func (f *ModelFlags) Validate(cfg flycl.Config, d int) error {
	return f.Bound().Validate(cfg, d)
}
