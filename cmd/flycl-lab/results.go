package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/flycl/flycl/cmd/internal/cli"
	"github.com/flycl/flycl/lab/experiment"
	"github.com/flycl/flycl/lab/methods"
	"github.com/flycl/flycl/vision/extract"
)

// inputs say where a run's features came from, for result.json
// (methods.Options.ResultConfig: the configuration of the run and the
// identity of its input files, path as given, size, SHA-256).
func (f *runFlags) inputs() (methods.Inputs, error) {
	in := methods.Inputs{Data: f.data.Data, Backbone: f.ext.Backbone, Preset: f.ext.Preset, Output: f.ext.Output,
		Sources: experiment.Sources{Train: f.data.Train, Test: f.data.Test, W: f.wFile}}
	if f.data.Data != "" {
		s, err := f.data.Spec()
		if err != nil {
			return in, err
		}
		in.Sources.Data, in.Sources.DataGiven = s.Path, f.data.Given().Path
	}
	if f.ext.Backbone != "" {
		spec, err := extract.ParseBackbone(f.ext.Backbone)
		if err != nil {
			return in, fmt.Errorf("--backbone: %w", err)
		}
		in.Sources.Weights, in.Sources.WeightsGiven = spec.WeightsPath(cli.ModelsDir()), spec.Path
	}
	return in, nil
}

// warner prints the runner's warnings on stderr as they come (nothing with
// --quiet; they are recorded in result.json and table.md either way).
func warner(quiet bool) func(experiment.Warning) {
	if quiet {
		return nil
	}
	return func(w experiment.Warning) { fmt.Fprintln(os.Stderr, "flycl: warning:", w) }
}

// methodsHelp lists the methods and the groups of the registry.
func methodsHelp() string {
	var groups []string
	for g := range methods.Groups {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for i, g := range groups {
		groups[i] = g + " (" + strings.Join(methods.Groups[g], ",") + ")"
	}
	return "comma-separated methods: " + strings.Join(methods.Names(), ", ") + "; or groups: " + strings.Join(groups, "; ")
}

// shorten cuts s to n characters with an ellipsis.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
