package main

import (
	"encoding"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/configflag"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/flagbind"
)

// TestEveryCommandHasEveryConfigFlag: every command that takes Fly-CL's
// configuration (it has --w-seed, a flag only the model flags have) has a
// flag for every field of flycl.Config, with the field's help text (its
// tag, as flycl.Config.FlagHelp completes it) and flycl.DefaultConfig's
// default, so a field added to flycl.Config is a flag of all of them; and
// learn, run, sweep, stats, merge and serve are among them.
func TestEveryCommandHasEveryConfigFlag(t *testing.T) {
	// export-w draws W and learns nothing: it takes W's fields only (m, p
	// and the seed; TestConfigFlagsFromTheSchema checks their help)
	drawsWOnly := map[string]bool{"flycl export-w": true}
	typ := reflect.TypeFor[flycl.Config]()
	cf := configflag.New()
	defaults := map[string]string{}
	for _, v := range cf.Values() {
		defaults[v.Flag] = v.String()
	}
	help := func(f reflect.StructField) string { return flycl.Config{}.FlagHelp(f.Name, f.Tag.Get("help")) }
	var found []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		fs := c.Flags()
		if fs.Lookup("w-seed") == nil || drawsWOnly[c.CommandPath()] {
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
			case fl.Usage != help(field):
				t.Errorf("%s --%s: help %q, flycl.Config.%s's is %q", c.CommandPath(), name, fl.Usage, field.Name, help(field))
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

// TestConfigFlagsFromTheSchema: a flag of any command named as a field
// of flycl.Config (--m, --lambdas, ...) is that field's, bound from the
// schema: its help is flycl.Config's, so that no command declares a
// hyper-parameter by hand (a benchmark may give another default). The
// exceptions are bench camera's and bench dual's --m, lists of m values
// to compare.
func TestConfigFlagsFromTheSchema(t *testing.T) {
	cf := configflag.New()
	schema := map[string]string{}
	for _, v := range cf.Values() {
		schema[v.Flag] = v.Help
	}
	other := map[string]bool{"flycl bench camera --m": true, "flycl bench dual --m": true}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			h, ok := schema[fl.Name]
			if !ok || other[c.CommandPath()+" --"+fl.Name] {
				return
			}
			if fl.Usage != h {
				t.Errorf("%s --%s: help %q, not flycl.Config's %q (bind it with configflag)", c.CommandPath(), fl.Name, fl.Usage, h)
			}
		})
	}
	walk(newRoot())
}

// TestLearnChecksEveryConfigFlag: on an existing model, each model flag
// set to a value other than the model's is refused, naming the flag; the
// model's own values (as the flags write them) are accepted. Every field
// of flycl.Config is tried with a value other than the model's
// (otherValue), so a new field is checked without a change here.
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
	typ := reflect.TypeFor[flycl.Config]()
	for i := range typ.NumField() {
		name := cf.Flag(typ.Field(i).Name)
		val, ok := otherValue(m.Config(), i)
		if !ok {
			t.Errorf("--%s: no other value of %s to try", name, typ.Field(i).Type)
			continue
		}
		_, err := runCLI(t, "learn", "--model", model, "--features", train, "--quiet", "--"+name+"="+val)
		if err == nil || !strings.Contains(err.Error(), "--"+name+" ") || !strings.Contains(err.Error(), "fixed when it is created") {
			t.Errorf("--%s %s on a model that has %s: %v", name, val, flagbind.FieldText(m.Config(), typ.Field(i).Name), err)
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

// otherValue returns a value of field i other than cfg's, as its flag
// takes it: the next number, the other truth value, a longer list, or for
// an enumeration the first other value that has a name.
func otherValue(cfg flycl.Config, i int) (string, bool) {
	c := reflect.New(reflect.TypeFor[flycl.Config]()).Elem()
	c.Set(reflect.ValueOf(cfg))
	have := reflect.ValueOf(cfg).Field(i)
	v := c.Field(i)
	if _, ok := v.Interface().(encoding.TextMarshaler); ok {
		want, _ := have.Interface().(encoding.TextMarshaler).MarshalText()
		for i := range 16 {
			v.SetInt(int64(i))
			if b, err := v.Interface().(encoding.TextMarshaler).MarshalText(); err == nil && string(b) != string(want) {
				return string(b), true
			}
		}
		return "", false
	}
	switch have.Kind() {
	case reflect.Int:
		v.SetInt(have.Int() + 1)
	case reflect.Uint64:
		v.SetUint(have.Uint() + 1)
	case reflect.Float64:
		v.SetFloat(2*have.Float() + 1)
	case reflect.Bool:
		v.SetBool(!have.Bool())
	case reflect.String:
		v.SetString(have.String() + "x")
	case reflect.Slice:
		v.Set(reflect.Append(have, reflect.ValueOf(1e9)))
	default:
		return "", false
	}
	return flagbind.FieldText(c.Interface(), c.Type().Field(i).Name), true
}
