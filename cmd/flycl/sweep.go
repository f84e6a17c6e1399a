package main

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/lab/experiment"
	"github.com/flycl/flycl/lab/sweep"
)

func sweepCmd() *cobra.Command {
	var f runFlags
	var param, values string
	c := &cobra.Command{
		Use:   "sweep",
		Short: "Sensitivity of Fly-CL to m, p or k: run the protocol for each value and plot Ā",
		Example: `  flycl sweep --data mnist --tasks 5 --train-per-class 500 --param k --values 500,1000,3000,6000
  flycl sweep --train tr.npz --test te.npz --param m --values 2000,5000,10000,20000`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := applyConfig(cmd.Flags(), f.config); err != nil {
				return err
			}
			opts, err := f.options(cmd.Flags())
			if err != nil {
				return err
			}
			vs, err := sweep.ParseValues(opts.FlyCL, param, values)
			if err != nil {
				return err
			}
			if err := checkOut(f.out); err != nil {
				return err
			}
			train, test, desc, err := f.load(cmd)
			if err != nil {
				return err
			}
			if err := sweep.CheckDim(opts.FlyCL, param, vs, train.D); err != nil {
				return err
			}
			p, err := f.settings(cmd.Flags()).Protocol(len(train.Classes()))
			if err != nil {
				return err
			}
			pts, err := sweep.Run(cmd.Context(), train, test, opts, param, vs, p, experiment.Hooks{Progress: runProgress(f.quiet), Warn: warner(f.quiet)})
			if err != nil {
				return err
			}
			if !f.quiet {
				if err := sweep.Table(os.Stdout, param, desc, pts); err != nil {
					return err
				}
			}
			return sweep.Save(f.out, param, desc, pts)
		},
	}
	f.register(c)
	c.Flags().StringVar(&param, "param", "k", "parameter to sweep: "+strings.Join(sweep.Params, ", "))
	c.Flags().StringVar(&values, "values", "", "comma-separated values")
	c.Flags().Lookup("out").DefValue = "out/sweep"
	f.out = "out/sweep"
	return c
}
