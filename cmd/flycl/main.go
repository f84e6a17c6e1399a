package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/cobra"
)

// commands is every subcommand of flycl ("flycl help" lists them
// alphabetically). A new command is one line here.
var commands = []func() *cobra.Command{
	runCmd,
	sweepCmd,
	extractCmd,
	reportCmd,
	heatmapCmd,
	hebbianCmd,
	analyzeCmd,
	exportWCmd,
	exportCmd,
	benchCmd,
	infoCmd,
	learnCmd,
	statsCmd,
	mergeCmd,
	predictCmd,
	forgetCmd,
	classesCmd,
	serveCmd,
	fetchCmd,
	reproduceCmd,
	environmentHelp,
}

// newRoot builds the command tree.
func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "flycl",
		Short:         "Fly-CL: class-incremental learning with a sparse random expansion and streaming ridge",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	for _, c := range commands {
		root.AddCommand(c())
	}
	return root
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := newRoot().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "flycl:", err)
		os.Exit(1)
	}
}
