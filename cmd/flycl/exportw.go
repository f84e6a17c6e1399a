package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/modelfile"
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
	c.Flags().IntVar(&m, "m", 10000, "rows (expansion dimension)")
	c.Flags().IntVar(&d, "d", 768, "columns (feature dimension)")
	c.Flags().IntVar(&p, "p", 300, "non-zeros per row")
	c.Flags().Uint64Var(&seed, "seed", 0, "seed")
	c.Flags().StringVar(&out, "out", "w.npz", "output file")
	return c
}
