package methods

import (
	"context"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/lab/experiment"
)

// Experiment is one flycl-lab run: the methods, for every seed, on the
// class-incremental protocol, as a user gives them (flycl-lab run's flags).
// Check checks what needs no data; Run checks the rest against the data
// and runs it.
type Experiment struct {
	Methods  string // comma-separated names or groups (Parse)
	Options  Options
	Protocol experiment.ProtocolSettings
	// Inputs and Desc say where the features came from, for result.json
	// (ResultConfig; Desc is its train and test).
	Inputs Inputs
	Desc   string
	// Heatmap records the prototype correlations of the first Fly-CL run
	// to finish (Prototypes).
	Heatmap bool
	// Start, if not nil, is called once every check has passed, before
	// the first run.
	Start func()
}

// Outcome is what an Experiment gives: its result (with Train, Test and
// Config set) and, with Heatmap, the prototypes it recorded (Stages nil
// when no Fly-CL run finished).
type Outcome struct {
	Result     *experiment.Result
	Prototypes *Prototypes
}

// DimensionError is Fly-CL's configuration refused for the features'
// dimension (flycl.Config.Validate): Err, a *flycl.FieldError of Config.
type DimensionError struct {
	Config flycl.Config
	Err    error
}

func (e *DimensionError) Error() string { return e.Err.Error() }
func (e *DimensionError) Unwrap() error { return e.Err }

// Check checks the settings that need no data: the protocol
// (ProtocolSettings.Check), the options (Options.Check) and the methods
// (Parse). Errors name the setting as flycl-lab run's flag.
func (e Experiment) Check() error {
	if err := e.Protocol.Check(); err != nil {
		return err
	}
	if err := e.Options.Check(); err != nil {
		return err
	}
	_, err := Parse(e.Methods, e.Options)
	return err
}

// Run checks the experiment against the data (Check; Fly-CL's
// configuration for the features' dimension, as a *DimensionError; the
// protocol for its classes; the result's configuration, ResultConfig)
// and runs it (experiment.Execute).
func (e Experiment) Run(ctx context.Context, train, test *features.Set, hooks experiment.Hooks) (*Outcome, error) {
	ms, err := Parse(e.Methods, e.Options)
	if err != nil {
		return nil, err
	}
	if err := e.Options.FlyCL.Validate(train.D); err != nil {
		return nil, &DimensionError{Config: e.Options.FlyCL, Err: err}
	}
	p, err := e.Protocol.Protocol(len(train.Classes()))
	if err != nil {
		return nil, err
	}
	rcfg, err := e.Options.ResultConfig(train.D, e.Inputs)
	if err != nil {
		return nil, err
	}
	if e.Start != nil {
		e.Start()
	}
	out := &Outcome{}
	if e.Heatmap {
		out.Prototypes = &Prototypes{Train: train, Protocol: p}
		hooks.Finished = out.Prototypes.Finished(ctx)
	}
	res, err := experiment.Execute(ctx, train, test, ms, p, hooks)
	if err != nil {
		return nil, err
	}
	res.Train, res.Test, res.Config = e.Desc, e.Desc, rcfg
	out.Result = res
	return out, nil
}
