package enginebench

import (
	"fmt"
	"sort"
	"strings"

	"github.com/flycl/flycl"
)

// Options are flycl-lab bench engine's settings as a user gives them: a scale
// by name, a number of tasks (0: the scale's) and the model's
// configuration. Resolve checks them; its errors name the setting
// (--scale) and quote the value, or are the configuration's
// (flycl.Config.Validate for the scale's dimension).
type Options struct {
	Scale  string
	Tasks  int
	Config flycl.Config
}

// Resolve returns the scale and configuration Run takes.
func (o Options) Resolve() (Scale, flycl.Config, error) {
	cfg := o.Config
	sc, err := LookupScale(o.Scale)
	if err != nil {
		return sc, cfg, err
	}
	if o.Tasks < 0 {
		return sc, cfg, fmt.Errorf("--tasks %d: must be at least 1 (or 0 for the scale's)", o.Tasks)
	}
	if o.Tasks > 0 {
		sc.Tasks = o.Tasks
	}
	if err := cfg.Validate(sc.Dim); err != nil {
		return sc, cfg, err
	}
	return sc, cfg, nil
}

// LookupScale returns the scale of Scales with this name; the error lists
// the names.
func LookupScale(name string) (Scale, error) {
	sc, ok := Scales[name]
	if !ok {
		var names []string
		for k := range Scales {
			names = append(names, k)
		}
		sort.Strings(names)
		return sc, fmt.Errorf("--scale %q: unknown (want %s)", name, strings.Join(names, " or "))
	}
	return sc, nil
}

// Setup checks flycl-lab bench components's settings as a user gives them and
// sets cs.Scale to the named scale.
func (cs *ComponentSettings) Setup(scale string) error {
	sc, err := LookupScale(scale)
	if err != nil {
		return err
	}
	cs.Scale = sc
	cfg := flycl.Config{M: cs.M, P: cs.P, K: cs.K, Lambdas: cs.Lambdas}
	if err := cfg.Validate(sc.Dim); err != nil {
		return err
	}
	if cs.Folds < 2 || cs.Runs < 1 || cs.TestPerCls < 1 {
		return fmt.Errorf("--folds %d, --runs %d, --test-per-class %d: need folds >= 2, runs >= 1, test-per-class >= 1", cs.Folds, cs.Runs, cs.TestPerCls)
	}
	return nil
}
