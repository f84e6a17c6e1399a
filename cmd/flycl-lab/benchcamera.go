package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/flagbind"
	"github.com/flycl/flycl/lab/bench"
)

// benchCameraCmd is "flycl-lab bench camera": the sizes of a new model learned
// from a few photos (internal/bench.Camera) on feature files.
func benchCameraCmd() *cobra.Command {
	var sets, shots, grids []string
	var ms []int
	o := bench.CameraOptions{}
	c := &cobra.Command{
		Use:   "camera --features NAME=DIR [--features NAME=DIR ...]",
		Short: "Measure m for a new model learned from a few photos: learn time, file size, memory, accuracy",
		Long: `For a new model learned from photos (as flycl learn creates one), per feature
set, m (k = 0.3·m, p scaled to the backbone's d) and λ grid: the first learn's
time after extraction, the model file's size, the peak RSS, the test accuracy
over random splits, the share of known test photos the "unknown" threshold
keeps, and how many learns' GCV choice was at an edge of the grid scored.

Each DIR holds train.npz and, optionally, test.npz as "flycl extract --out DIR"
writes them. Without test.npz each split learns --shots photos per class and
tests on the rest. scripts/camera-bench builds the benchmark's two sets from
../shared and runs this command.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(sets) == 0 {
				return fmt.Errorf("--features: give at least one NAME=DIR")
			}
			var err error
			if o.Sets, err = bench.LoadCameraSets(sets, shots); err != nil {
				return err
			}
			o.M, o.Grids = ms, grids
			rows, err := bench.Camera(cmd.Context(), os.Stderr, o)
			if err != nil {
				return err
			}
			bench.PrintCamera(os.Stdout, rows)
			return nil
		},
	}
	f := c.Flags()
	f.StringArrayVar(&sets, "features", nil, "NAME=DIR: feature files DIR/train.npz and, optionally, DIR/test.npz (repeatable)")
	f.StringArrayVar(&shots, "shots", nil, "NAME=N: learn N photos per class of set NAME in each split (default: all of train.npz)")
	f.IntSliceVar(&ms, "m", []int{1000, 2000, 3000, 5000, 10000}, "expansion dimensions")
	paper := flagbind.FormatFloat(flycl.DefaultLambdas[0]) + ".." + flagbind.FormatFloat(flycl.DefaultLambdas[len(flycl.DefaultLambdas)-1])
	f.StringSliceVar(&grids, "grid", []string{"widen"}, "λ grids: paper ("+paper+", absolute), relative, widen (relative, widened while GCV's optimum is at an edge), rel:X (a fixed λ of X times the mean diagonal of G)")
	f.IntVar(&o.Splits, "splits", 5, "random splits (samples learned and seed of W) per set")
	f.Uint64Var(&o.Seed, "seed", 1, "seed of the splits")
	return c
}
