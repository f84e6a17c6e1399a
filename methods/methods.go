// Package methods adapts Fly-CL and the methods it is compared with to the
// experiment runner, and names them for the command line.
package methods

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/experiment"
)

// FlyCL is the experiment adapter of a flycl.Model.
type FlyCL struct{ Model *flycl.Model }

// LearnTask implements experiment.Learner.
func (f *FlyCL) LearnTask(ctx context.Context, x []float32, labels []int) error {
	_, err := f.Model.LearnTask(ctx, x, labels)
	return err
}

// Predict implements experiment.Learner.
func (f *FlyCL) Predict(ctx context.Context, x []float32) ([]int, error) {
	return f.Model.Predict(ctx, x)
}

// LastLambda implements experiment.Lambdaer.
func (f *FlyCL) LastLambda() float64 { return f.Model.Lambda() }

// Options are the settings shared by the methods.
type Options struct {
	FlyCL flycl.Config
}

// registry maps a method name to its constructor.
var registry = map[string]func(o Options) experiment.Method{
	"flycl": func(o Options) experiment.Method {
		return experiment.Method{Name: "Fly-CL", New: func(d int, seed int64) (experiment.Learner, error) {
			m, err := flycl.New(o.FlyCL, d)
			if err != nil {
				return nil, err
			}
			return &FlyCL{Model: m}, nil
		}}
	},
}

// Names returns the method names accepted by Parse, sorted.
func Names() []string {
	var n []string
	for k := range registry {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Parse turns a comma-separated list of names into methods.
func Parse(list string, o Options) ([]experiment.Method, error) {
	var out []experiment.Method
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(strings.ToLower(name))
		if name == "" {
			continue
		}
		mk, ok := registry[name]
		if !ok {
			return nil, fmt.Errorf("unknown method %q (known: %s)", name, strings.Join(Names(), ", "))
		}
		out = append(out, mk(o))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no methods given (known: %s)", strings.Join(Names(), ", "))
	}
	return out, nil
}
