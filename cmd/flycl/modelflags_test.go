package main

import (
	"encoding"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/configflag"
	"github.com/flycl/flycl/cmd/internal/clitest"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/flagbind"
)

// TestEveryCommandHasEveryConfigFlag: every command that takes Fly-CL's
// configuration has a flag for every field of flycl.Config, with its help
// and default (clitest.ConfigFlags); learn, stats, merge and serve are
// among them (flycl-lab's run and sweep: its own test).
func TestEveryCommandHasEveryConfigFlag(t *testing.T) {
	clitest.ConfigFlags(t, newRoot(), nil, "flycl learn", "flycl stats", "flycl merge", "flycl serve")
}

// TestConfigFlagsFromTheSchema: a flag of any command named as a field
// of flycl.Config is that field's, bound from the schema
// (clitest.SchemaFlags).
func TestConfigFlagsFromTheSchema(t *testing.T) {
	clitest.SchemaFlags(t, newRoot(), nil)
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
