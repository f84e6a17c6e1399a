package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
)

// groups are flycl's subcommands by who reads them ("flycl help" lists
// each group alphabetically, in this order): first what a camera user
// needs (a model file; serving it), then the research lab. A new command
// is one line here.
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
	{"research", "Research (the paper's protocol, data and figures):", []func() *cobra.Command{
		runCmd, sweepCmd, extractCmd, reportCmd, heatmapCmd, hebbianCmd, analyzeCmd, exportWCmd, fetchCmd, reproduceCmd,
	}},
	{"bench", "Benchmarks:", []func() *cobra.Command{benchCmd}},
}

// ungrouped are the commands and help topics outside the groups.
var ungrouped = []func() *cobra.Command{versionCmd, environmentHelp, weightsHelp}

// newRoot builds the command tree.
func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "flycl",
		Short:         "Fly-CL: class-incremental learning with a sparse random expansion and streaming ridge",
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
	// flycl --version: the same lines as flycl version
	root.Flags().Bool("version", false, "print the versions (as flycl version) and exit")
	root.Flags().String("ort-lib", "", "with --version: path to libonnxruntime.so (default $"+envORTLib+"; see flycl help environment)")
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
	// with the nearest flags suggested (flagError)
	root.SetFlagErrorFunc(flagError)
	return root
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := newRoot().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "flycl:", err)
		os.Exit(exitCode(err))
	}
}

// Exit statuses of flycl (docs/DEPLOY.md, "Exit status"). The one place an
// error becomes a status: by the library's typed errors, with errors.Is.
const (
	exitFailure = 1 // anything else: a failed computation, I/O, a bug
	exitInput   = 2 // the input given was refused: data, features, names, flags
	exitLocked  = 3 // the model file is held by another writer (retry, or --wait)
)

// exitCode maps an error to flycl's exit status.
func exitCode(err error) int {
	switch {
	case errors.Is(err, modelfile.ErrLocked):
		return exitLocked
	case flycl.IsInput(err):
		return exitInput
	}
	return exitFailure
}
