package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/vision/extract"
)

// A command's flags are listed in groups by who needs them: the model
// file and its input, the model a new file gets, serving, and the
// advanced ones (research settings, tuning, resources) last, under their
// own heading. flagGroup names the group of a flag; a command whose flags
// fall in one group lists them as cobra does.

const (
	groupInput    = "The model file and the input"
	groupModel    = "The model (a new model file only; an existing model keeps its own)"
	groupServing  = "Serving"
	groupAdvanced = "Advanced (research settings, tuning and resources)"
)

// modelGroup are the hyper-parameters a user may set for a new model.
var modelGroup = map[string]bool{"m": true, "k": true, "p": true, "lambdas": true, "lambda": true,
	"unknown-keep": true, "unknown-score": true, "dim": true}

// advancedGroup are the research settings and the tuning of resources.
var advancedGroup = map[string]bool{
	"gcv": true, "gcv-scope": true, "lambda-scale": true, "lambda-policy": true, "projection": true, "topk": true,
	"w": true, "w-seed": true, "widen-grid": true, "online": true, "online-batch": true, "output": true, "preset": true,
	"precision": true, "calib": true, "calib-method": true, "batch": true, "decode-pixels": true, "decode-wait": true,
	"max-image-pixels": true, "threads": true, "cache": true, "ort-lib": true, "ort-spin": true, "extractions": true,
	"queue": true, "max-decode": true, "checkpoint-bytes": true, "checkpoint-every": true, "reload-every": true,
	"read-timeout": true, "write-timeout": true, "idle-timeout": true, "shutdown-timeout": true, "log-format": true,
	"max-body": true, "max-images": true, "max-pixels": true, "max-request-pixels": true,
}

// servingCommands list the flags not named above under Serving.
var servingCommands = map[string]bool{"serve": true, "watch": true, "frigate": true}

func flagGroup(cmd *cobra.Command, name string) string {
	switch {
	case modelGroup[name]:
		return groupModel
	case advancedGroup[name]:
		return groupAdvanced
	case servingCommands[cmd.Name()] && name != "model" && name != "backbone" && name != "help" && name != "wait":
		return groupServing
	}
	return groupInput
}

// groupedFlagUsages is the "Flags:" part of cmd's usage, by group.
func groupedFlagUsages(cmd *cobra.Command) string {
	order := []string{groupInput, groupModel, groupServing, groupAdvanced}
	sets := map[string]*pflag.FlagSet{}
	cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if d := f.Annotations[defaultsAnnotation]; len(d) == 1 {
			// the defaults per input, for the listing only: the flag's own
			// help stays flycl.Config's
			shown := *f
			shown.DefValue = zeroDef(f)
			shown.Usage += " (default: " + d[0] + ")"
			f = &shown
		}
		g := flagGroup(cmd, f.Name)
		if sets[g] == nil {
			sets[g] = pflag.NewFlagSet(g, pflag.ContinueOnError)
			sets[g].SortFlags = cmd.LocalFlags().SortFlags
		}
		sets[g].AddFlag(f)
	})
	if len(sets) <= 1 {
		for _, fs := range sets {
			return "Flags:\n" + fs.FlagUsages()
		}
		return ""
	}
	var b strings.Builder
	for _, g := range order {
		if sets[g] == nil {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s:\n%s", g, sets[g].FlagUsages())
	}
	return b.String()
}

// groupedUsageTemplate is cobra's usage template with the local flags by
// group (groupedFlagUsages).
func groupedUsageTemplate(def string) string {
	const from = "Flags:\n{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}"
	if !strings.Contains(def, from) {
		return def // another cobra: its own listing
	}
	return strings.Replace(def, from, "{{groupedFlagUsages . | trimTrailingWhitespaces}}", 1)
}

func init() { cobra.AddTemplateFunc("groupedFlagUsages", groupedFlagUsages) }

// perInputDefaults rewrites the defaults that differ by input, in the help
// of the model flags of c: a new model learned from photos
// (deploy.DefaultImageConfig, for the default backbone's dimension) and
// one learned from feature vectors or by a research run
// (flycl.DefaultConfig) each get their own, both read from the one place
// they are defined, so that no default printed is one a photo learn does
// not use.
func perInputDefaults(c *cobra.Command) {
	feat := flycl.DefaultConfig()
	d := defaultBackboneDim
	img := deploy.DefaultImageConfig(d)
	say := func(name, photos, other string) {
		f := c.Flags().Lookup(name)
		if f == nil {
			return
		}
		if photos == other {
			return
		}
		if f.Annotations == nil {
			f.Annotations = map[string][]string{}
		}
		f.Annotations[defaultsAnnotation] = []string{fmt.Sprintf("photos %s; feature vectors and research runs %s", photos, other)}
	}
	say("m", strconv.Itoa(img.M), strconv.Itoa(feat.M))
	say("k", strconv.Itoa(img.K), strconv.Itoa(feat.K))
	say("p", fmt.Sprintf("%d for %s's d = %d (300·d/768)", img.P, extract.DefaultBackbone, d), strconv.Itoa(min(feat.P, 300)))
	say("lambdas", floats(img.Lambdas)+" times the Gram matrix's mean diagonal", floats(feat.Lambdas))
	say("lambda-scale", img.LambdaScale.String(), feat.LambdaScale.String())
	say("dual", strconv.Itoa(img.Dual), strconv.Itoa(feat.Dual))
	say("widen-grid", strconv.FormatBool(img.WidenGrid), strconv.FormatBool(feat.WidenGrid))
}

// defaultBackboneDim is the feature dimension of extract.DefaultBackbone,
// MobileNetV2 1.0's 1280 (checked against the built-in weights by
// TestHelpDefaultsArePhotoLearns).
const defaultBackboneDim = 1280

// defaultsAnnotation holds a flag's defaults per input, shown in place of
// its one default (groupedFlagUsages).
const defaultsAnnotation = "flycl_defaults_per_input"

// zeroDef is the DefValue that pflag prints no default for.
func zeroDef(f *pflag.Flag) string {
	switch f.Value.Type() {
	case "bool":
		return "false"
	case "int", "uint", "float64", "float32", "int64":
		return "0"
	}
	return ""
}

func floats(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strings.Join(s, ",")
}
