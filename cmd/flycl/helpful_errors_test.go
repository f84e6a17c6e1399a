package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/cmd/internal/cli"
)

// TestFlagSuggestionsEveryCommand: for every command of the tree, each of
// its flags mistyped by swapping two letters (the commonest typo) is
// refused as input with that flag among the suggestions, as cobra
// suggests a mistyped command.
func TestFlagSuggestionsEveryCommand(t *testing.T) {
	var walk func(c *cobra.Command)
	checked := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !c.Runnable() {
			return
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || len(f.Name) < 4 || checked > 4000 {
				return
			}
			typo := f.Name[:1] + f.Name[2:3] + f.Name[1:2] + f.Name[3:]
			if typo == f.Name || c.Flags().Lookup(typo) != nil {
				return
			}
			err := cli.FlagError(c, pflagUnknown(typo))
			if !flycl.IsInput(err) || !strings.Contains(err.Error(), "did you mean") || !strings.Contains(err.Error(), "--"+f.Name) {
				t.Errorf("%s --%s (for --%s): %v", c.CommandPath(), typo, f.Name, err)
			}
			checked++
		})
	}
	walk(newRoot())
	if checked < 100 {
		t.Errorf("only %d flags checked", checked)
	}
}

// pflagUnknown is pflag's own error for an unknown flag, made by pflag.
func pflagUnknown(name string) error {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	return fs.Parse([]string{"--" + name})
}

// TestHelpfulErrors: through the command line, a mistyped flag is
// suggested the right one; --data with a bare folder is told folder:; a
// predict on a model file that does not exist says to learn first, with
// the command.
func TestHelpfulErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "never.flycl")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"predict", "--modle", "x.flycl", "a.jpg"}, []string{"unknown flag: --modle", "did you mean --model?"}},
		{[]string{"serve", "--adr", "127.0.0.1:1"}, []string{"did you mean --addr?"}},
		{[]string{"learn", "--model", missing, "--data", "photos"}, []string{`unknown kind "photos"`, "give folder:photos"}},
		{[]string{"predict", "--model", missing, "a.jpg"}, []string{"no such file", "learn first: flycl learn --model " + missing + " --data folder:"}},
		{[]string{"info", missing}, []string{"learn first"}},
	} {
		_, err := runCLI(t, tc.args...)
		if err == nil {
			t.Errorf("%v: no error", tc.args)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %v\nwant %q in it", tc.args, err, w)
			}
		}
		if exitCode(err) != exitInput {
			t.Errorf("%v: exit status %d, want %d (input refused)", tc.args, exitCode(err), exitInput)
		}
	}
}
