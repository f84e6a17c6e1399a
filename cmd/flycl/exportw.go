package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/projection"
)

func exportWCmd() *cobra.Command {
	var m, d, p int
	var seed uint64
	var out string
	c := &cobra.Command{
		Use:   "export-w",
		Short: "Write Fly-CL's projection W for a seed as .npz (indices, values, shape, seed), for use by another implementation",
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, c := range []struct {
				name string
				v    int
			}{{"m", m}, {"d", d}, {"p", p}} {
				if c.v < 1 {
					return fmt.Errorf("--%s %d: must be at least 1", c.name, c.v)
				}
			}
			if p > d {
				return fmt.Errorf("--p %d: must be at most d (--d %d)", p, d)
			}
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
	def := flycl.DefaultConfig()
	c.Flags().IntVar(&m, "m", def.M, "rows (expansion dimension)")
	c.Flags().IntVar(&d, "d", 768, "columns (feature dimension; 768 is ViT-B/16's)")
	c.Flags().IntVar(&p, "p", def.P, "non-zeros per row")
	c.Flags().Uint64Var(&seed, "seed", def.Seed, "seed")
	c.Flags().StringVar(&out, "out", "w.npz", "output file")
	return c
}
