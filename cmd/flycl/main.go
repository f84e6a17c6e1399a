package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl/cmd/internal/cli"
)

// groups are flycl's subcommands by who reads them ("flycl help" lists
// each group alphabetically, in this order): what a camera user needs (a
// model file; serving it). The research lab's commands are flycl-lab's
// (lab.go). A new command is one line here.
var groups = []struct {
	id, title string
	commands  []func() *cobra.Command
}{
	{"model", "Models (a model file: teach, ask, change, inspect):", []func() *cobra.Command{
		learnCmd, predictCmd, forgetCmd, undoCmd, historyCmd, repairCmd, classesCmd, infoCmd, statsCmd, mergeCmd,
	}},
	{"deploy", "Deploy (serve a model, watch cameras, export it):", []func() *cobra.Command{
		serveCmd, watchCmd, frigateCmd, exportCmd,
	}},
	{"features", "Features (a data set through a backbone, for learn --features and flycl-lab):", []func() *cobra.Command{extractCmd}},
}

// ungrouped are the commands and help topics outside the groups.
var ungrouped = []func() *cobra.Command{versionCmd, environmentHelp, weightsHelp, researchHelp}

// newRoot builds the command tree.
func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "flycl",
		Short: "Fly-CL: class-incremental learning with a sparse random expansion and streaming ridge",
		Long: `Fly-CL: class-incremental learning with a sparse random expansion and streaming ridge.

The research lab's commands (run, sweep, fetch, bench, ...) are flycl-lab's:
flycl help research.`,
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
	for _, c := range ungrouped {
		root.AddCommand(c())
	}
	addLabCommands(root)
	// flycl --version: the same lines as flycl version
	root.Flags().Bool("version", false, "print the versions (as flycl version) and exit")
	root.Flags().String("ort-lib", "", "with --version: path to libonnxruntime.so (default $"+cli.EnvORTLib+"; see flycl help environment)")
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if v, _ := cmd.Flags().GetBool("version"); v {
			collectVersion(ortVersion(cmd)).write(cmd.OutOrStdout())
			return nil
		}
		return cmd.Help()
	}
	// flags listed by group (helpgroups.go)
	root.SetUsageTemplate(groupedUsageTemplate(root.UsageTemplate()))
	// a flag value that does not parse, or an unknown flag: input refused,
	// with the nearest flags suggested (cli.FlagError)
	root.SetFlagErrorFunc(cli.FlagError)
	return root
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := newRoot().ExecuteContext(ctx); err != nil {
		if !ranLab(err) { // flycl-lab said it
			fmt.Fprintln(os.Stderr, errorLine(err, ctx.Err() != nil))
		}
		os.Exit(exitCode(err))
	}
}

// errorLine is the line flycl prints for the error err that ended it;
// interrupted says Ctrl-C (SIGINT) came, which the error then says in
// words, not only as Go's "context canceled".
func errorLine(err error, interrupted bool) string {
	if interrupted && errors.Is(err, context.Canceled) {
		return "flycl: interrupted (Ctrl-C): " + err.Error()
	}
	return "flycl: " + err.Error()
}

// Exit statuses of flycl (cli.ExitCode).
const (
	exitFailure = cli.ExitFailure
	exitInput   = cli.ExitInput
	exitLocked  = cli.ExitLocked
)

// exitCode maps an error to flycl's exit status (cli.ExitCode).
func exitCode(err error) int { return cli.ExitCode(err) }
