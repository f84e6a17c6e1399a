package main

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/lab/experiment"
	"github.com/flycl/flycl/lab/methods"
	"github.com/flycl/flycl/lab/sweep"
)

// sweepOptions are flycl-lab sweep's flags.
type sweepOptions struct {
	runFlags
	param, values string
}

// AddFlags adds sweep's flags to c.
func (o *sweepOptions) AddFlags(c *cobra.Command) {
	o.register(c)
	c.Flags().StringVar(&o.param, "param", "k", "parameter to sweep: "+strings.Join(sweep.Params, ", "))
	c.Flags().StringVar(&o.values, "values", "", "comma-separated values")
	c.Flags().Lookup("out").DefValue = "out/sweep"
	o.out = "out/sweep"
}

func sweepCmd() *cobra.Command {
	var o sweepOptions
	c := &cobra.Command{
		Use:   "sweep",
		Short: "Sensitivity of Fly-CL to m, p or k: run the protocol for each value and plot Ā",
		Example: `  flycl-lab sweep --data mnist --tasks 5 --train-per-class 500 --param k --values 500,1000,3000,6000
  flycl-lab sweep --train tr.npz --test te.npz --param m --values 2000,5000,10000,20000`,
		RunE: o.run,
	}
	o.AddFlags(c)
	return c
}

// run resolves the flags into a sweep.Sweep, checks it, loads the
// features, runs it (sweep.Sweep.Run), prints its table and saves it.
func (o *sweepOptions) run(cmd *cobra.Command, args []string) error {
	var s sweep.Sweep
	train, test, desc, err := o.begin(cmd, func(opts methods.Options) checker {
		s = sweep.Sweep{Param: o.param, Values: o.values, Options: opts, Protocol: o.settings(cmd.Flags())}
		return s
	})
	if err != nil {
		return err
	}
	pts, err := s.Run(cmd.Context(), train, test, experiment.Hooks{Progress: runProgress(o.quiet), Warn: warner(o.quiet)})
	if err != nil {
		return err
	}
	if !o.quiet {
		if err := sweep.Table(os.Stdout, o.param, desc, pts); err != nil {
			return err
		}
	}
	return sweep.Save(o.out, o.param, desc, pts)
}
