package experiment

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/flycl/flycl/lab/protocol"
)

// ProtocolSettings are a protocol as a user writes it (the flags and
// settings file of flycl-lab run and sweep, which share these names): seeds
// and order as text, and which of Init and Increment were given (they go
// together, and override Tasks). Check and Protocol turn them into a Protocol; their errors
// name the setting (--tasks) and quote the value given.
type ProtocolSettings struct {
	Tasks          int
	Init           int
	Increment      int
	InitGiven      bool
	IncrementGiven bool
	TrainPerClass  int
	Seeds          string // comma-separated integers
	Order          string // protocol.ParseOrder's text
}

// Check checks the settings that need no data.
func (s ProtocolSettings) Check() error {
	if s.Tasks < 1 {
		return fmt.Errorf("--tasks %d: must be at least 1", s.Tasks)
	}
	if s.InitGiven || s.IncrementGiven {
		if !s.InitGiven || !s.IncrementGiven {
			return fmt.Errorf("--init and --increment go together (--init %d --increment %d)", s.Init, s.Increment)
		}
		if s.Init < 1 {
			return fmt.Errorf("--init %d: must be at least 1", s.Init)
		}
		if s.Increment < 1 {
			return fmt.Errorf("--increment %d: must be at least 1", s.Increment)
		}
	}
	if s.TrainPerClass < 0 {
		return fmt.Errorf("--train-per-class %d: must be at least 1 (or 0 for all)", s.TrainPerClass)
	}
	return nil
}

// Protocol returns the protocol for a data set of the given number of
// classes (an explicit order must list each of them once).
func (s ProtocolSettings) Protocol(classes int) (Protocol, error) {
	p := Protocol{Tasks: s.Tasks, Init: s.Init, Increment: s.Increment, TrainPerClass: s.TrainPerClass}
	for _, x := range strings.Split(s.Seeds, ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return p, fmt.Errorf("--seeds: %q is not an integer", x)
		}
		p.Seeds = append(p.Seeds, v)
	}
	o, list, err := protocol.ParseOrder(s.Order, classes)
	if err != nil {
		return p, err
	}
	p.Order, p.List = o, list
	return p, nil
}
