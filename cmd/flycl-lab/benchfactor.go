package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/cmd/internal/cli"
	"github.com/flycl/flycl/lab/bench"
)

// benchLearnUpdateCmd measures a small learn on the path that updates the
// Cholesky factor by the learn's rank-n term against the path that
// refactors G + λI, on the same learns in one run (solve only: no file is
// written).
func benchLearnUpdateCmd() *cobra.Command {
	var o bench.LearnUpdateOptions // the flags set it; RunE passes it on
	mf := cli.SomeModelFlags(flycl.DefaultConfig(), "M")
	c := &cobra.Command{
		Use:   "learn-update [--m 10000] [--d 512] [--n 20] [--learns 10] [--lambda-policy gcv|keep]",
		Short: "Time of a small learn: keeping the Cholesky factor (low-rank term) vs refactoring (solve only)",
		Long: `Teaches a model --learns learns of --n synthetic feature vectors (--classes new
classes each) twice, first refactoring G + λI on every learn, then keeping the
factor and adding each learn's rank-n term to its low-rank term where the
learn's λ equals the factor's and the samples since the factorisation stay
within ridge.UpdateLimit. It prints every learn's time
on both paths with its stages, the median of learns 2.. (the first learn of a
model always factors), their ratio and each path's peak resident memory. The
learns are flycl.Model.Learn (with --lambda-policy keep, LearnOptions.Policy
keeps the first learn's λ): no model file is written, so the times are the
learn's alone, without a save.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.M = mf.Given().M // checked by LearnUpdate, with k = min(k, m)
			return bench.LearnUpdate(cmd.Context(), os.Stdout, o)
		},
	}
	fs := c.Flags()
	mf.Register(fs) // --m
	fs.IntVar(&o.D, "d", 512, "feature dimension")
	fs.IntVar(&o.N, "n", 20, "samples per learn")
	fs.IntVar(&o.Classes, "classes", 2, "new classes per learn")
	fs.IntVar(&o.Learns, "learns", 10, "learns, one after another")
	fs.IntVar(&o.Limit, "update-limit", -1, "most samples since the factorisation that keep the factor on the update path (-1: the default ridge.UpdateLimit(m); larger values measure the crossover)")
	fs.TextVar(&o.Policy, "lambda-policy", flycl.LambdaGCV, "gcv: λ by GCV on each learn; keep: the first learn's λ for all")
	return c
}
