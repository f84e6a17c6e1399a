package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/cmd/internal/cli"
)

func TestConfigFileAndFlagPrecedence(t *testing.T) {
	c := runCmd()
	cfg := filepath.Join(t.TempDir(), "run.json")
	os.WriteFile(cfg, []byte(`{"tasks": 5, "seeds": [1, 2, 3], "order": "pilot", "m": 2000}`), 0o644)
	if err := c.Flags().Parse([]string{"--config", cfg, "--m", "3000"}); err != nil {
		t.Fatal(err)
	}
	if err := applyConfig(c.Flags(), cfg); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"tasks": "5", "seeds": "1,2,3", "order": "pilot", "m": "3000"} {
		if got := c.Flags().Lookup(name).Value.String(); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	os.WriteFile(cfg, []byte(`{"taskz": 5}`), 0o644)
	if err := applyConfig(c.Flags(), cfg); err == nil {
		t.Error("unknown setting: no error")
	}
	os.WriteFile(cfg, []byte(`{"tasks": "five"}`), 0o644)
	if err := applyConfig(runCmd().Flags(), cfg); err == nil {
		t.Error("bad value: no error")
	}
}

// TestConfigFileValues: each JSON value type of a config file becomes the
// flag value it stands for (numbers as written, so a large integer is not
// refused as "1e+06"), and null, objects and nested lists are errors
// naming the file and the setting.
func TestConfigFileValues(t *testing.T) {
	for _, c := range []struct {
		json, flag, want, err string
	}{
		{`{"online-batch": 1000000}`, "online-batch", "1000000", ""},
		{`{"m": 20000}`, "m", "20000", ""},
		{`{"online-lambda": 1e6}`, "online-lambda", "1e+06", ""},
		{`{"lambdas": [1e4, 100000, "1e6"]}`, "lambdas", "1e4,100000,1e6", ""},
		{`{"quiet": true}`, "quiet", "true", ""},
		{`{"out": null}`, "out", "", "out: null"},
		{`{"order": {"a": 1}}`, "order", "", "order: an object"},
		{`{"seeds": [[1, 2]]}`, "seeds", "", "seeds: a list inside a list"},
		{`{"tasks": 2.5}`, "tasks", "", "tasks"},
		{`{"tasks": 5} {"m": 1}`, "tasks", "", "data after"},
	} {
		t.Run(c.json, func(t *testing.T) {
			cmd := runCmd()
			cfg := filepath.Join(t.TempDir(), "run.json")
			if err := os.WriteFile(cfg, []byte(c.json), 0o644); err != nil {
				t.Fatal(err)
			}
			err := applyConfig(cmd.Flags(), cfg)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), cfg) {
					t.Fatalf("error %v, want one naming %s and %q", err, cfg, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cmd.Flags().Lookup(c.flag).Value.String(); got != c.want {
				t.Fatalf("%s = %q, want %q", c.flag, got, c.want)
			}
		})
	}
}

// FuzzApplyConfig: any bytes as a run config file set flags or give an
// error naming the file; never a panic.
func FuzzApplyConfig(f *testing.F) {
	for _, s := range []string{`{"tasks": 5, "seeds": [1, 2, 3], "order": "pilot", "m": 2000}`,
		`{"online-batch": 1000000, "lambdas": [1e4, "1e5"], "quiet": true}`, `{"out": null}`, `[1]`, `{"m": {"x": []}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg := filepath.Join(t.TempDir(), "run.json")
		if err := os.WriteFile(cfg, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := applyConfig(runCmd().Flags(), cfg); err != nil && !strings.Contains(err.Error(), cfg) {
			t.Fatalf("error without the file's name: %v", err)
		}
	})
}

func TestRunEndToEnd(t *testing.T) {
	dir := t.TempDir()
	tr, te, out := filepath.Join(dir, "tr.npz"), filepath.Join(dir, "te.npz"), filepath.Join(dir, "out")
	writeBlobs(t, tr, 1, 30)
	writeBlobs(t, te, 2, 10)
	c := runCmd()
	c.SetArgs([]string{"--train", tr, "--test", te, "--tasks", "2", "--seeds", "1,2", "--methods", "flycl,ncm",
		"--m", "300", "--p", "3", "--k", "90", "--lambdas", "0.1,1,10", "--out", out, "--quiet"})
	if err := c.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"result.json", "result.csv", "table.md", "curves.png", "heatmap.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	csvText, _ := os.ReadFile(filepath.Join(out, "result.csv"))
	if !strings.Contains(string(csvText), "gcv=") || !strings.Contains(string(csvText), "factor=") {
		t.Errorf("result.csv has no per-stage times for Fly-CL:\n%s", csvText)
	}
	table, _ := os.ReadFile(filepath.Join(out, "table.md"))
	if !strings.Contains(string(table), "| Fly-CL |") || !strings.Contains(string(table), "| NCM |") {
		t.Errorf("table:\n%s", table)
	}
	// W exported by export-w and read back gives the same result as the seed
	wf := filepath.Join(dir, "w.npz")
	ew := exportWCmd()
	ew.SetArgs([]string{"--m", "300", "--d", "6", "--p", "3", "--w-seed", "0", "--out", wf})
	if err := ew.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(dir, "out2")
	c = runCmd()
	c.SetArgs([]string{"--train", tr, "--test", te, "--tasks", "2", "--seeds", "1,2", "--methods", "flycl,ncm",
		"--w", wf, "--k", "90", "--lambdas", "0.1,1,10", "--out", out2, "--quiet"})
	if err := c.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	table2, _ := os.ReadFile(filepath.Join(out2, "table.md"))
	row := func(tb []byte) string {
		for _, l := range strings.Split(string(tb), "\n") {
			if strings.HasPrefix(l, "| Fly-CL |") {
				f := strings.Split(l, "|")
				return strings.Join(f[2:6], "|") // accuracies, not times
			}
		}
		return ""
	}
	if row(table) == "" || row(table) != row(table2) {
		t.Errorf("imported W gave different accuracies:\n%s\n%s", row(table), row(table2))
	}
	for _, args := range [][]string{
		{"--test", te},
		{"--train", tr, "--test", te, "--methods", "nope"},
		{"--train", tr, "--test", te, "--tasks", "3"},
		{"--train", tr, "--test", filepath.Join(dir, "missing.npz")},
		{"--data", "cifar7"},
	} {
		c := runCmd()
		c.SetArgs(append(args, "--quiet", "--out", out))
		if err := c.ExecuteContext(context.Background()); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// TestFlagErrors: a flag given a value it cannot take is an error that
// quotes the value given (never the default, never silently replaced),
// before any data is read or anything is written (issue 11 §4).
func TestFlagErrors(t *testing.T) {
	dir := t.TempDir()
	tr, te := filepath.Join(dir, "tr.npz"), filepath.Join(dir, "te.npz")
	writeBlobs(t, tr, 1, 30) // d = 6
	writeBlobs(t, te, 2, 10)
	blocked := filepath.Join(dir, "file")
	os.WriteFile(blocked, nil, 0o644)
	data := []string{"--train", tr, "--test", te, "--m", "300", "--k", "90", "--p", "3"}
	for _, tc := range []struct {
		args []string
		want []string // all in the error
		not  string   // a default that must not be quoted
	}{
		{[]string{"--tasks", "0"}, []string{"--tasks 0"}, ""},
		{[]string{"--tasks", "-3"}, []string{"--tasks -3"}, ""},
		{[]string{"--m", "0"}, []string{"--m 0"}, "10000"},
		{[]string{"--k", "0"}, []string{"--k 0"}, "3000"},
		{[]string{"--p", "0"}, []string{"--p 0"}, "300"},
		{[]string{"--k", "301"}, []string{"--k 301", "--m 300"}, "3000"},
		{[]string{"--init", "2", "--increment", "0"}, []string{"--increment 0"}, ""},
		{[]string{"--init", "0", "--increment", "1"}, []string{"--init 0"}, ""},
		{[]string{"--init", "2"}, []string{"--init", "--increment"}, ""},
		{[]string{"--train-per-class", "-5"}, []string{"--train-per-class -5"}, ""},
		{[]string{"--online-batch", "-1"}, []string{"--online-batch -1"}, "1000"},
		{[]string{"--online-lambda", "-2"}, []string{"--online-lambda -2"}, ""},
		{[]string{"--lambdas", "1,0"}, []string{"--lambdas 1,0"}, ""},
		{[]string{"--lambdas", "1,x"}, []string{`"x"`}, ""},
		{[]string{"--p", "7"}, []string{"--p 7", "d=6", "at most 6"}, "300"},
		{[]string{"--out", filepath.Join(blocked, "sub")}, []string{"--out", blocked}, ""},
	} {
		c := runCmd()
		c.SetArgs(append(append(append([]string{}, data...), tc.args...), "--quiet", "--methods", "flycl"))
		if !slices.Contains(tc.args, "--out") {
			c.SetArgs(append(append(append([]string{}, data...), tc.args...), "--quiet", "--methods", "flycl", "--out", filepath.Join(dir, "out")))
		}
		err := c.ExecuteContext(context.Background())
		if err == nil {
			t.Errorf("%v: no error", tc.args)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q does not say %q", tc.args, err, w)
			}
		}
		if tc.not != "" && strings.Contains(err.Error(), tc.not) {
			t.Errorf("%v: error %q quotes the default %s", tc.args, err, tc.not)
		}
	}
	// the output folder is checked before anything is computed
	if _, err := os.Stat(filepath.Join(dir, "out", "result.json")); err == nil {
		t.Error("a failed run wrote result.json")
	}
}

// TestDefaultsFromOneSource: the flags' defaults are flycl.DefaultConfig.
func TestDefaultsFromOneSource(t *testing.T) {
	var f cli.ModelFlags
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	f.Register(fs)
	cfg, err := f.Config()
	if err != nil {
		t.Fatal(err)
	}
	d := flycl.DefaultConfig()
	if cfg.M != d.M || cfg.P != d.P || cfg.K != d.K || cfg.Seed != d.Seed || !slices.Equal(cfg.Lambdas, d.Lambdas) ||
		cfg.TopK != d.TopK || cfg.GCV != d.GCV || cfg.Projection != d.Projection {
		t.Errorf("flag defaults %+v, flycl.DefaultConfig %+v", cfg, d)
	}
	ew := exportWCmd()
	for name, want := range map[string]int{"m": d.M, "p": d.P} {
		if got := ew.Flags().Lookup(name).DefValue; got != strconv.Itoa(want) {
			t.Errorf("export-w --%s default %s, want %d", name, got, want)
		}
	}
}

// TestExportWSeedNames: export-w's W seed is the schema's --w-seed; the old
// --seed still gives the same W (deprecated), another seed another W, and
// both at once are refused.
func TestExportWSeedNames(t *testing.T) {
	dir := t.TempDir()
	export := func(name string, args ...string) ([]byte, error) {
		out := filepath.Join(dir, name)
		c := exportWCmd()
		c.SetArgs(append([]string{"--m", "40", "--d", "6", "--p", "3", "--out", out}, args...))
		c.SetErr(io.Discard)
		if err := c.ExecuteContext(context.Background()); err != nil {
			return nil, err
		}
		return os.ReadFile(out)
	}
	a, err := export("a.npz", "--w-seed", "5")
	if err != nil {
		t.Fatal(err)
	}
	b, err := export("b.npz", "--seed", "5")
	if err != nil {
		t.Fatal(err)
	}
	c, err := export("c.npz", "--w-seed", "6")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) || bytes.Equal(a, c) {
		t.Errorf("--w-seed 5 and --seed 5 equal: %v (want true); --w-seed 5 and 6 equal: %v (want false)", bytes.Equal(a, b), bytes.Equal(a, c))
	}
	if _, err := export("d.npz", "--seed", "5", "--w-seed", "5"); err == nil || !strings.Contains(err.Error(), "--w-seed") {
		t.Errorf("--seed with --w-seed: %v, want a refusal naming --w-seed", err)
	}
}
