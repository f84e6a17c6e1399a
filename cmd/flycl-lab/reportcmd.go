package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/lab/report"
)

// reportOptions are flycl-lab report's flags.
type reportOptions struct {
	out     string
	compare bool
}

// AddFlags adds report's flags to c.
func (o *reportOptions) AddFlags(c *cobra.Command) {
	c.Flags().StringVar(&o.out, "out", "out/report", "output directory")
	c.Flags().BoolVar(&o.compare, "compare", false, "print one table across experiments (one merged result.json each) instead of merging")
}

func reportCmd() *cobra.Command {
	var o reportOptions
	c := &cobra.Command{
		Use:   "report RESULT.json...",
		Short: "Merge result.json files of separate runs (e.g. one per seed) and write the combined table and plots",
		Long: `Merges result.json files of separate runs of one experiment (e.g. one per
seed) and writes the combined table and plots to --out.

With --compare the files are different experiments instead: it prints one
Markdown table with a column per file (named by its directory) and a row per
method, each cell Ā ± std over seeds with A_T in parentheses.`,
		Example: `  flycl-lab report --out results/mnist results/mnist/seed*/result.json
  flycl-lab report --compare results/*/result.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: o.run,
	}
	o.AddFlags(c)
	return c
}

// run merges the result files (report.MergeFiles) and writes the combined table and plots, or compares them (report.CompareFiles).
func (o *reportOptions) run(cmd *cobra.Command, args []string) error {
	if o.compare {
		return report.CompareFiles(cmd.OutOrStdout(), args...)
	}
	m, err := report.MergeFiles(args...)
	if err != nil {
		return err
	}
	sums, err := report.WriteAll(o.out, m)
	if err != nil {
		return err
	}
	report.Table(cmd.OutOrStdout(), m, sums)
	fmt.Fprintf(os.Stderr, "merged %d files into %s\n", len(args), o.out)
	return nil
}
