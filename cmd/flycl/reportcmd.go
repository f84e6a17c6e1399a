package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/experiment"
	"github.com/flycl/flycl/report"
)

func init() { extraCommands = append(extraCommands, reportCmd) }

func reportCmd() *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "report RESULT.json...",
		Short: "Merge result.json files of separate runs (e.g. one per seed) and write the combined table and plots",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var rs []*experiment.Result
			for _, p := range args {
				r, err := report.ReadResult(p)
				if err != nil {
					return err
				}
				rs = append(rs, r)
			}
			m, err := report.Merge(rs)
			if err != nil {
				return err
			}
			sums, err := report.WriteAll(out, m)
			if err != nil {
				return err
			}
			report.Markdown(os.Stdout, sums)
			fmt.Fprintf(os.Stderr, "merged %d files into %s\n", len(args), out)
			return nil
		},
	}
	c.Flags().StringVar(&out, "out", "out/report", "output directory")
	return c
}
