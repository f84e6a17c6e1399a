package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/cmd/internal/cli"
	"github.com/flycl/flycl/lab/bench"
)

// benchServeLearnCmd measures what one learn costs the server: the wall
// time and the peak resident memory of server.FileBackend.Learn (learn,
// save, publish) on a model of the given m, next to the memory the model
// itself holds.
func benchServeLearnCmd() *cobra.Command {
	var o bench.ServeLearnOptions // the flags set it; RunE passes it on
	mf := cli.SomeModelFlags(flycl.DefaultConfig(), "M")
	c := &cobra.Command{
		Use:   "serve-learn [--m 10000] [--d 512] [--n 20] [--learns 10] [--lambda-policy keep|gcv]",
		Short: "Peak memory and time of one learn of flycl serve's model file backend (learn + save + publish)",
		Long: `Creates a model file (in --dir, a temporary folder by default) with the server's
file backend and teaches it --learns tasks of --n synthetic feature vectors
(--classes new classes each), one after another, as POST /v1/learn does.
Before each learn it returns freed memory to the system and resets the
kernel's peak-RSS counter, then prints the learn's wall time (learn and
save), the resident memory before it, the peak during it, and the peak
less the memory before, next to G's size (m×m float32): the extra memory a
learn needs on top of the model it changes, and the peak as a multiple of
G (the copy per learn it replaced made it about 3.3). A last row reopens the file (a
restart, or the undo of a failed learn) with no model in memory before.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.M = mf.Given().M // checked by ServeLearn, with k = min(k, m)
			return bench.ServeLearn(cmd.Context(), os.Stdout, os.Stderr, o)
		},
	}
	fs := c.Flags()
	mf.Register(fs) // --m
	fs.IntVar(&o.D, "d", 512, "feature dimension")
	fs.IntVar(&o.N, "n", 20, "samples per learn")
	fs.IntVar(&o.Classes, "classes", 2, "new classes per learn")
	fs.IntVar(&o.Learns, "learns", 10, "learns, one after another")
	fs.StringVar(&o.Dir, "dir", "", "folder for the model file (default: a temporary one, removed afterwards)")
	fs.TextVar(&o.Policy, "lambda-policy", flycl.LambdaKeep, "λ of the learns after the first: keep (the factor's λ stays, so a small learn updates it) or gcv (GCV on every learn, as the paper; a learn whose λ changes refactors)")
	fs.IntVar(&o.Checkpoint, "checkpoint-every", 16, "the journal path's checkpoint interval (flycl serve's default)")
	fs.StringSliceVar(&o.Paths, "paths", nil, "paths to run (default all): refactor+rewrite, update+journal, dual+journal (the model in the dual form)")
	return c
}
