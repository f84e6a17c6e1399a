package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/experiment"
	"github.com/flycl/flycl/extract"
	"github.com/flycl/flycl/methods"
	"github.com/flycl/flycl/projection"
)

// resultConfig records the configuration of a run and the identity of its
// input files (path as given, size, SHA-256) for result.json.
func (f *runFlags) resultConfig(cfg flycl.Config, opts methods.Options, d int) (*experiment.Config, error) {
	c := &experiment.Config{
		Config:        cfg,
		HebbianPasses: opts.HebbianPasses,
		OnlineBatch:   opts.OnlineBatch, OnlineLambda: opts.OnlineLambda,
		Data: f.data.data, Backbone: f.ext.backbone, Preset: f.ext.preset,
	}
	if len(c.Lambdas) == 0 {
		c.Lambdas = flycl.DefaultLambdas
	}
	if c.Backbone != "" {
		c.Output = f.ext.output
	}
	if c.Data == "" {
		c.Data = "features"
	}
	add := func(role, path string) error {
		in, err := experiment.Identify(role, path)
		if err != nil {
			return err
		}
		c.Inputs = append(c.Inputs, in)
		return nil
	}
	if f.data.train != "" {
		if err := add("train", f.data.train); err != nil {
			return nil, err
		}
	}
	if f.data.test != "" {
		if err := add("test", f.data.test); err != nil {
			return nil, err
		}
	}
	if f.data.data != "" {
		// The data set's folder or archive, recorded with the path the
		// user gave ("" when it is the data set's default location).
		given := f.data.given().Path
		s, err := f.data.spec()
		if err != nil {
			return nil, err
		}
		if path := s.Path; path != "" {
			if err := add("data", path); err != nil {
				return nil, err
			}
			c.Inputs[len(c.Inputs)-1].Path = given
		}
	}
	if f.ext.backbone != "" {
		// The backbone's weights: the file or folder of the spec, or the
		// backbone's folder in the models folder.
		spec, err := extract.ParseBackbone(f.ext.backbone)
		if err != nil {
			return nil, fmt.Errorf("--backbone: %w", err)
		}
		given, path := spec.Path, spec.WeightsPath(modelsDir())
		if path != "" {
			if err := add("weights", path); err != nil {
				return nil, err
			}
			c.Inputs[len(c.Inputs)-1].Path = given
		}
	}
	w := opts.W
	if f.wFile != "" {
		if err := add("w", f.wFile); err != nil {
			return nil, err
		}
	} else if cfg.P <= d {
		var err error
		if w, err = projection.Generate(cfg.M, d, cfg.P, cfg.Seed); err != nil {
			return nil, err
		}
	}
	if w != nil {
		c.WSHA256 = w.Digest()
	}
	return c, nil
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

// dataName names the data of a run for captions: the data set as given,
// or the training feature file.
func dataName(c *experiment.Config) string {
	if c.Data != "features" {
		return c.Data
	}
	for _, in := range c.Inputs {
		if in.Role == "train" {
			return in.Path
		}
	}
	return c.Data
}

// shorten cuts s to n characters with an ellipsis.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
