package sweep

import (
	"context"

	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/lab/experiment"
	"github.com/flycl/flycl/lab/methods"
)

// Sweep is flycl-lab sweep as a user gives it: Fly-CL with Options, Param set
// to each of Values (comma-separated, ParseValues), on the protocol.
// Check checks what needs no data; Run checks the rest against the data
// and runs it.
type Sweep struct {
	Param, Values string
	Options       methods.Options
	Protocol      experiment.ProtocolSettings
}

// Check checks the settings that need no data: the protocol
// (ProtocolSettings.Check), the options (methods.Options.Check) and the
// values (ParseValues). Errors name the setting as flycl-lab sweep's flag.
func (s Sweep) Check() error {
	if err := s.Protocol.Check(); err != nil {
		return err
	}
	if err := s.Options.Check(); err != nil {
		return err
	}
	_, err := ParseValues(s.Options.FlyCL, s.Param, s.Values)
	return err
}

// Run checks the sweep against the data (Check; every configuration for
// the features' dimension, CheckDim; the protocol for its classes) and
// runs Fly-CL for every value (Run).
func (s Sweep) Run(ctx context.Context, train, test *features.Set, hooks experiment.Hooks) ([]Point, error) {
	vs, err := ParseValues(s.Options.FlyCL, s.Param, s.Values)
	if err != nil {
		return nil, err
	}
	if err := CheckDim(s.Options.FlyCL, s.Param, vs, train.D); err != nil {
		return nil, err
	}
	p, err := s.Protocol.Protocol(len(train.Classes()))
	if err != nil {
		return nil, err
	}
	return Run(ctx, train, test, s.Options, s.Param, vs, p, hooks)
}
