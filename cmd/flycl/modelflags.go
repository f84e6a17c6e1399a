package main

import (
	"github.com/spf13/pflag"

	"github.com/flycl/flycl/app/configflag"
	"github.com/flycl/flycl/cmd/internal/cli"
)

// modelFlags are Fly-CL's hyper-parameters on the command line
// (cli.ModelFlags: flycl.Config's fields as flags), under the names this
// package's commands call them by.
type modelFlags struct{ cli.ModelFlags }

func (f *modelFlags) register(fs *pflag.FlagSet) { f.Register(fs) }

// bound returns the flags, made on first use (cli.ModelFlags.Bound).
func (f *modelFlags) bound() *configflag.Flags { return f.Bound() }
