// Package configflag turns flycl.Config into command-line flags, for
// every command that takes Fly-CL's hyper-parameters (flycl learn, run,
// stats, serve, ... and the Beam launcher): one flag per field of
// flycl.Config, named and described by the field's tags, defaulting to
// flycl.DefaultConfig, checked by flycl.Config.Check with errors that name
// the flag and quote the value given. NewWith binds some of the fields,
// with a command's own defaults (a benchmark's), their help and checks
// still flycl.Config's. Flags.Agree is the one check that
// the flags the user set agree with a configuration already fixed: a model
// file's (AgreeModel), a given W's (AgreeW), statistics' (AgreeStats).
// NewConfig and NewModel make the model that flycl learn, stats and serve
// create when the file does not exist (sized for images when it learns
// through a backbone), NewFromStats the one flycl merge creates;
// StartNewModel starts a new model's W while its images are extracted,
// for NewModelAhead to take.
// ReadSettings parses a settings file (a JSON object of flag names and
// values, flycl-lab run --config) into flag text.
package configflag
