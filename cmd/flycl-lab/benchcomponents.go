package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/cmd/internal/cli"
	"github.com/flycl/flycl/lab/enginebench"
)

// componentsCmd is "flycl-lab bench components": the paper's table of time
// savings per post-extraction component, measured side by side.
func componentsCmd() *cobra.Command {
	var scale string
	mf := cli.SomeModelFlags(flycl.DefaultConfig(), "M", "P", "K", "Lambdas")
	cs := enginebench.ComponentSettings{Folds: 5, Runs: 3, TestPerCls: 30}
	c := &cobra.Command{
		Use:   "components",
		Short: "Vanilla vs Fly-CL time of each post-extraction component (the paper's component table)",
		Long: `Times, at one task of a synthetic stream at the paper's scale, each component
of Fly-CL's post-extraction work against a vanilla implementation, side by
side in one process, with flop counts: random projection (dense Gaussian W
vs the sparse W as Fly-CL applies it), ridge selection (explicit k-fold
cross-validation over the grid vs GCV), prototype calculation (LU vs
Cholesky) and similarity comparison (dense codes vs top-k-sparse codes).
The vanilla cross-validation is timed once (it factors an m×m matrix per
fold and grid value); everything else is the median of --runs.`,
		Example: `  flycl-lab bench components --scale cub`,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := mf.Config()
			if err != nil {
				return err
			}
			cs.M, cs.P, cs.K, cs.Lambdas = cfg.M, cfg.P, cfg.K, cfg.Lambdas
			if err := cs.Setup(scale); err != nil {
				return mf.Explain(cfg, err)
			}
			comps, err := enginebench.Components(cmd.Context(), cs, os.Stderr)
			if err != nil {
				return err
			}
			enginebench.ReportComponents(cmd.OutOrStdout(), cs, comps)
			return nil
		},
	}
	fs := c.Flags()
	fs.StringVar(&scale, "scale", "cub", "scale of the synthetic task")
	mf.Register(fs) // --m --p --k --lambdas
	fs.IntVar(&cs.Folds, "folds", cs.Folds, "folds of the vanilla cross-validation")
	fs.IntVar(&cs.Runs, "runs", cs.Runs, "repetitions of each fast measurement (median)")
	fs.IntVar(&cs.TestPerCls, "test-per-class", cs.TestPerCls, "test codes per class for the similarity step")
	return c
}
