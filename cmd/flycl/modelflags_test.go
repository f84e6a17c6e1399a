package main

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/configflag"
	"github.com/flycl/flycl/internal/flagbind"
	"github.com/flycl/flycl/modelfile"
)

// TestEveryCommandHasEveryConfigFlag: every command that takes Fly-CL's
// configuration (it has --w-seed, a flag only the model flags have) has a
// flag for every field of flycl.Config, with the field's help text and
// flycl.DefaultConfig's default, so a field added to flycl.Config is a
// flag of all of them; and learn, run, sweep, stats, merge and serve are
// among them.
func TestEveryCommandHasEveryConfigFlag(t *testing.T) {
	typ := reflect.TypeFor[flycl.Config]()
	cf := configflag.New()
	defaults := map[string]string{}
	for _, v := range cf.Values() {
		defaults[v.Flag] = v.String()
	}
	var found []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		fs := c.Flags()
		if fs.Lookup("w-seed") == nil {
			return
		}
		found = append(found, c.CommandPath())
		for i := range typ.NumField() {
			field := typ.Field(i)
			name := cf.Flag(field.Name)
			fl := fs.Lookup(name)
			switch {
			case fl == nil:
				t.Errorf("%s: no --%s for flycl.Config.%s", c.CommandPath(), name, field.Name)
			case fl.Usage != field.Tag.Get("help"):
				t.Errorf("%s --%s: help %q, flycl.Config.%s's is %q", c.CommandPath(), name, fl.Usage, field.Name, field.Tag.Get("help"))
			case fl.DefValue != defaults[name]:
				t.Errorf("%s --%s: default %q, flycl.DefaultConfig's %q", c.CommandPath(), name, fl.DefValue, defaults[name])
			}
		}
	}
	walk(newRoot())
	for _, want := range []string{"flycl learn", "flycl run", "flycl sweep", "flycl stats", "flycl merge", "flycl serve"} {
		if !slices.Contains(found, want) {
			t.Errorf("%s does not take the model flags (commands that do: %s)", want, strings.Join(found, ", "))
		}
	}
}

// TestLearnChecksEveryConfigFlag: on an existing model, each model flag
// set to a value other than the model's is refused, naming the flag; the
// model's own values (as the flags write them) are accepted. Every field
// of flycl.Config is tried (its non-default value is the one the flag
// check would see), so a new field is checked without a change here.
func TestLearnChecksEveryConfigFlag(t *testing.T) {
	dir := t.TempDir()
	train, model := filepath.Join(dir, "train.npz"), filepath.Join(dir, "m.flycl")
	blobs(t, train, 1, 6, 10, "cat", "dog")
	if _, err := runCLI(t, "learn", "--model", model, "--features", train, "--m", "60", "--p", "3", "--k", "20", "--lambdas", "1,10", "--quiet"); err != nil {
		t.Fatal(err)
	}
	m, err := modelfile.LoadModel(model)
	if err != nil {
		t.Fatal(err)
	}
	cf := configflag.New()
	// other values: a different number, the other enumeration value
	other := map[string]string{"m": "61", "p": "4", "k": "21", "w-seed": "5", "topk": "magnitude", "lambdas": "1,100",
		"gcv": "dual", "gcv-scope": "all", "projection": "dense", "lambda-scale": "relative", "widen-grid": "true"}
	typ := reflect.TypeFor[flycl.Config]()
	for i := range typ.NumField() {
		name := cf.Flag(typ.Field(i).Name)
		val, ok := other[name]
		if !ok {
			t.Errorf("--%s: no other value to try (add one here)", name)
			continue
		}
		_, err := runCLI(t, "learn", "--model", model, "--features", train, "--quiet", "--"+name+"="+val)
		if err == nil || !strings.Contains(err.Error(), "--"+name+" ") || !strings.Contains(err.Error(), "fixed when it is created") {
			t.Errorf("--%s %s on a model that has another: %v", name, val, err)
		}
	}
	// all of them at once with the model's values: accepted
	args := []string{"learn", "--model", model, "--features", train, "--quiet"}
	for i := range typ.NumField() {
		f := typ.Field(i)
		args = append(args, "--"+cf.Flag(f.Name)+"="+flagbind.FieldText(m.Config(), f.Name))
	}
	if _, err := runCLI(t, args...); err != nil {
		t.Errorf("the model's own values %v: %v", args[6:], err)
	}
}
