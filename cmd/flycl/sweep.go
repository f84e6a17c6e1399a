package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/experiment"
	"github.com/flycl/flycl/methods"
	"github.com/flycl/flycl/report"
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
			if err := checkOut(f.out); err != nil {
				return err
			}
			train, test, desc, err := f.load(cmd)
			if err != nil {
				return err
			}
			p, err := f.protocol(len(train.Classes()))
			if err != nil {
				return err
			}
			var xs []float64
			var sums []report.Summary
			var rows []report.SweepRow
			for _, vs := range strings.Split(values, ",") {
				v, err := strconv.Atoi(strings.TrimSpace(vs))
				if err != nil {
					return fmt.Errorf("--values: %q is not an integer", vs)
				}
				cfg, err := f.flyclConfig()
				if err != nil {
					return err
				}
				switch param {
				case "m":
					cfg.M = v
				case "p":
					cfg.P = v
				case "k":
					cfg.K = v
				default:
					return fmt.Errorf("--param %q: want m, p or k", param)
				}
				if cfg.K > cfg.M {
					cfg.K = cfg.M
				}
				ms, err := methods.Parse("flycl", methods.Options{FlyCL: cfg})
				if err != nil {
					return err
				}
				ms[0].Name = fmt.Sprintf("Fly-CL %s=%d", param, v)
				res, err := experiment.Execute(cmd.Context(), train, test, ms, p, experiment.Hooks{Progress: runProgress(f.quiet), Warn: warner(f.quiet)})
				if err != nil {
					return err
				}
				s := report.Summarize(res)[0]
				xs, sums = append(xs, float64(v)), append(sums, s)
				rows = append(rows, report.SweepRow{M: cfg.M, P: cfg.P, K: cfg.K, Summary: s, Warnings: len(res.Warnings())})
			}
			if err := os.MkdirAll(f.out, 0o755); err != nil {
				return err
			}
			var b strings.Builder
			if err := report.SweepTable(&b, param, desc, rows); err != nil {
				return err
			}
			if !f.quiet {
				fmt.Print(b.String())
			}
			if err := report.WriteText(filepath.Join(f.out, "sweep_"+param+".md"), b.String()); err != nil {
				return err
			}
			if err := report.WriteJSON(filepath.Join(f.out, "sweep_"+param+".json"), sums); err != nil {
				return err
			}
			return report.Sweep(filepath.Join(f.out, "sweep_"+param+".png"), param, xs, sums)
		},
	}
	f.register(c)
	c.Flags().StringVar(&param, "param", "k", "parameter to sweep: m, p or k")
	c.Flags().StringVar(&values, "values", "", "comma-separated values")
	c.Flags().Lookup("out").DefValue = "out/sweep"
	f.out = "out/sweep"
	return c
}
