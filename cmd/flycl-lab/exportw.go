package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/cmd/internal/cli"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/projection"
)

func exportWCmd() *cobra.Command {
	var d int
	var oldSeed uint64 // --seed, the old name of --w-seed
	var out string
	def := flycl.DefaultConfig()
	mf := cli.SomeModelFlags(def, "M", "P", "Seed")
	c := &cobra.Command{
		Use:   "export-w",
		Short: "Write Fly-CL's projection W for a seed as .npz (indices, values, shape, seed), for use by another implementation",
		RunE: func(cmd *cobra.Command, args []string) error {
			if d < 1 {
				return fmt.Errorf("--d %d: must be at least 1", d)
			}
			cfg := mf.Given()
			if cmd.Flags().Changed("seed") {
				if cmd.Flags().Changed("w-seed") {
					return fmt.Errorf("--seed is the old name of --w-seed: give one")
				}
				cfg.Seed = oldSeed
			}
			seed := cfg.Seed
			cfg.K = flycl.KForM(cfg.M) // W has no k: the one valid for m
			if err := mf.Validate(cfg, d); err != nil {
				return err
			}
			m, p := cfg.M, cfg.P
			w, err := projection.Generate(m, d, p, seed)
			if err != nil {
				return err
			}
			if err := modelfile.ExportProjection(out, w); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "wrote %s: W %d×%d, %d non-zeros per row, seed %d\n", out, m, d, p, seed)
			return nil
		},
	}
	mf.Register(c.Flags()) // --m --p --w-seed
	c.Flags().IntVar(&d, "d", 768, "columns (feature dimension; 768 is ViT-B/16's)")
	c.Flags().Uint64Var(&oldSeed, "seed", def.Seed, "seed of W (the old name of --w-seed)")
	c.Flags().MarkDeprecated("seed", "use --w-seed, the name every command gives W's seed")
	c.Flags().StringVar(&out, "out", "w.npz", "output file")
	return c
}
