package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/lab/bench"
)

// benchDualCmd measures the crossover between the dual and the primal
// form of a model (the table of docs/PERFORMANCE.md, "The dual form").
func benchDualCmd() *cobra.Command {
	var o bench.DualOptions
	c := &cobra.Command{
		Use:   "dual [--m 3000,10000] [--n 50,100,200,400,800,1600] [--primal-n 100]",
		Short: "Learn time and memory of the dual and the primal form of a model against its samples",
		Long: `For each --m and --n, a model holding n synthetic feature vectors learns --add
more (GCV and the calibration on, as flycl serve learns), in the dual form and,
at the n of --primal-n, in the primal form (whose cost hardly depends on n).
It prints the learn's wall time and the memory each form holds: the codes
and the n×n kernel with its eigenvectors (dual), G (primal, 4·m² bytes).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return bench.Dual(cmd.Context(), os.Stdout, o)
		},
	}
	fs := c.Flags()
	fs.IntSliceVar(&o.Ms, "m", []int{3000, 10000}, "expansion dimensions")
	fs.IntSliceVar(&o.Ns, "n", []int{50, 100, 200, 400, 800, 1600}, "samples the model holds before the timed learn")
	fs.IntSliceVar(&o.PrimalN, "primal-n", []int{100}, "the n at which the primal form is timed too")
	fs.IntVar(&o.D, "d", 512, "feature dimension")
	fs.IntVar(&o.Add, "add", 10, "samples of the timed learn")
	fs.IntVar(&o.Classes, "classes", 10, "classes of the samples")
	return c
}
