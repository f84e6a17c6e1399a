package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/cmd/internal/cli"
)

// groups are flycl-lab's subcommands ("flycl-lab help" lists each group
// alphabetically, in this order). A new command is one line here.
var groups = []struct {
	id, title string
	commands  []func() *cobra.Command
}{
	{"research", "Research (the paper's protocol, data and figures):", []func() *cobra.Command{
		runCmd, sweepCmd, reportCmd, heatmapCmd, hebbianCmd, analyzeCmd, exportWCmd, fetchCmd, reproduceCmd,
	}},
	{"bench", "Benchmarks:", []func() *cobra.Command{benchCmd}},
}

// newRoot builds the command tree.
func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "flycl-lab",
		Short: "Fly-CL's research lab: the paper's protocol, data sets, figures and benchmarks",
		Long: `Fly-CL's research lab: the paper's protocol, data sets, figures and benchmarks.

Models, serving and cameras are flycl's ("flycl help"); so are feature
extraction (flycl extract) and the settings read from the environment
("flycl help environment"), which flycl-lab reads the same way.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	for _, g := range groups {
		root.AddGroup(&cobra.Group{ID: g.id, Title: g.title})
		for _, newCmd := range g.commands {
			c := newCmd()
			c.GroupID = g.id
			root.AddCommand(c)
		}
	}
	// a flag value that does not parse, or an unknown flag: input refused,
	// with the nearest flags suggested
	root.SetFlagErrorFunc(cli.FlagError)
	return root
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := newRoot().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "flycl-lab:", err)
		os.Exit(cli.ExitCode(err))
	}
}
