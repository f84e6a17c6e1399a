// Command flycl runs Fly-CL class-incremental learning experiments and
// serves trained models. Run "flycl help" for the subcommands.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	root := &cobra.Command{
		Use:           "flycl",
		Short:         "Fly-CL: class-incremental learning with a sparse random expansion and streaming ridge",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(benchCmd(), infoCmd())
	for _, c := range extraCommands {
		root.AddCommand(c())
	}
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "flycl:", err)
		os.Exit(1)
	}
}

// extraCommands lets other files of this package register subcommands.
var extraCommands []func() *cobra.Command
