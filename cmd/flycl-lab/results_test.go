package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/format/features"
)

// capture runs f with os.Stdout and os.Stderr redirected to files and
// returns what was written to each.
func capture(t *testing.T, f func() error) (stdout, stderr string, err error) {
	t.Helper()
	dir := t.TempDir()
	o, _ := os.Create(filepath.Join(dir, "out"))
	e, _ := os.Create(filepath.Join(dir, "err"))
	so, se := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = o, e
	err = f()
	os.Stdout, os.Stderr = so, se
	o.Close()
	e.Close()
	bo, _ := os.ReadFile(o.Name())
	be, _ := os.ReadFile(e.Name())
	return string(bo), string(be), err
}

// --quiet prints nothing (the grid 1e6..1e9 is at the edge for these
// features, so there is a warning to suppress); without it the warning
// reaches stderr. result.json records the configuration and the inputs,
// and report refuses to merge runs of different m.
func TestQuietConfigAndReportRefusal(t *testing.T) {
	dir := t.TempDir()
	tr, te := filepath.Join(dir, "tr.npz"), filepath.Join(dir, "te.npz")
	writeBlobs(t, tr, 1, 30)
	writeBlobs(t, te, 2, 10)
	run := func(out string, m string, quiet bool) (string, string) {
		args := []string{"--train", tr, "--test", te, "--tasks", "2", "--seeds", "1", "--methods", "flycl",
			"--m", m, "--p", "3", "--k", "90", "--out", out}
		if quiet {
			args = append(args, "--quiet")
		}
		c := runCmd()
		c.SetArgs(args)
		so, se, err := capture(t, func() error { return c.ExecuteContext(context.Background()) })
		if err != nil {
			t.Fatal(err)
		}
		return so, se
	}
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if so, se := run(a, "300", true); so != "" || se != "" {
		t.Errorf("--quiet printed:\nstdout %q\nstderr %q", so, se)
	}
	so, se := run(b, "200", false)
	if !strings.Contains(se, "warning: Fly-CL seed 1 task 1: GCV") || !strings.Contains(so, "| Fly-CL |") {
		t.Errorf("without --quiet:\nstdout %s\nstderr %s", so, se)
	}
	var js struct {
		Schema int `json:"schema"`
		Config struct {
			M      int `json:"m"`
			Inputs []struct {
				Role, Path, SHA256 string
				Size               int64
			} `json:"inputs"`
		} `json:"config"`
		Runs []struct {
			Warnings []struct{ Task int } `json:"warnings"`
		} `json:"runs"`
	}
	raw, _ := os.ReadFile(filepath.Join(a, "result.json"))
	if err := json.Unmarshal(raw, &js); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(tr)
	if js.Schema != 1 || js.Config.M != 300 || len(js.Config.Inputs) != 2 || js.Config.Inputs[0].Path != tr ||
		js.Config.Inputs[0].Size != st.Size() || len(js.Config.Inputs[0].SHA256) != 64 || len(js.Runs[0].Warnings) == 0 {
		t.Errorf("result.json: %+v", js)
	}
	rc := reportCmd()
	rc.SetArgs([]string{"--out", filepath.Join(dir, "merged"), filepath.Join(a, "result.json"), filepath.Join(b, "result.json")})
	_, _, err := capture(t, func() error { return rc.ExecuteContext(context.Background()) })
	if err == nil || !strings.Contains(err.Error(), "m: 300 vs 200") {
		t.Errorf("report merged m=300 with m=200: %v", err)
	}
}

func TestMethodsHelpListsGroups(t *testing.T) {
	h := runCmd().Flags().Lookup("methods").Usage
	for _, want := range []string{"baselines (", "ablations (", "all (", "flycl-online"} {
		if !strings.Contains(h, want) {
			t.Errorf("--methods help %q lacks %q", h, want)
		}
	}
}

// The probe: features scaled by 1e20 (train and test alike). With
// the paper's absolute grid Fly-CL cannot learn them: their float32 Gram
// matrix would overflow, and the run stops with an error that names the
// cause and the remedy instead of a chance-level classifier; with
// --lambda-scale relative (inputs scaled by a power of two) it matches NCM
// (an edge warning may remain: these blobs want a small λ).
func TestScaledFeaturesProbe(t *testing.T) {
	dir := t.TempDir()
	tr, te := filepath.Join(dir, "tr.npz"), filepath.Join(dir, "te.npz")
	writeScaledBlobs(t, tr, 1, 30, 1e20)
	writeScaledBlobs(t, te, 2, 10, 1e20)
	run := func(out string, extra ...string) (string, error) {
		c := runCmd()
		c.SetArgs(append([]string{"--train", tr, "--test", te, "--tasks", "2", "--seeds", "1", "--methods", "flycl,ncm",
			"--m", "300", "--p", "3", "--k", "90", "--out", out}, extra...))
		_, se, err := capture(t, func() error { return c.ExecuteContext(context.Background()) })
		return se, err
	}
	acc := func(out string, extra ...string) (flycl, ncm string, stderr string) {
		se, err := run(out, extra...)
		if err != nil {
			t.Fatal(err)
		}
		tb, _ := os.ReadFile(filepath.Join(out, "table.md"))
		for _, l := range strings.Split(string(tb), "\n") {
			f := strings.Split(l, "|")
			if len(f) > 3 && strings.TrimSpace(f[1]) == "Fly-CL" {
				flycl = strings.TrimSpace(f[2])
			}
			if len(f) > 3 && strings.TrimSpace(f[1]) == "NCM" {
				ncm = strings.TrimSpace(f[2])
			}
		}
		return flycl, ncm, se
	}
	if _, err := run(filepath.Join(dir, "abs")); err == nil || !strings.Contains(err.Error(), "too large for float32") ||
		!strings.Contains(err.Error(), "--lambda-scale relative") {
		t.Errorf("absolute grid on 1e20 features: want an error naming the overflow and the remedy, got %v", err)
	}
	fr, ncm2, se2 := acc(filepath.Join(dir, "rel"), "--lambda-scale", "relative")
	if fr != ncm2 || strings.Contains(se2, "not finite") || strings.Contains(se2, "flat") {
		t.Errorf("relative grid: Fly-CL A_T %s, NCM %s, stderr %q", fr, ncm2, se2)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "rel", "result.json"))
	if !strings.Contains(string(raw), `"lambda_scale": "relative"`) || !strings.Contains(string(raw), `"lambdas": [
      0.01,`) {
		t.Errorf("result.json does not record the relative grid")
	}
}

// A class with training samples but no test samples: the run finishes,
// its cells are n/a, nothing is NaN (before: "plotter: NaN data point"
// after writing NaN into result.json and table.md).
func TestClassWithoutTestSamples(t *testing.T) {
	dir := t.TempDir()
	tr, te, out := filepath.Join(dir, "tr.npz"), filepath.Join(dir, "te.npz"), filepath.Join(dir, "out")
	writeBlobs(t, tr, 1, 30)
	writeBlobs(t, te, 2, 10)
	s, err := features.Load(te)
	if err != nil {
		t.Fatal(err)
	}
	keep := &features.Set{D: s.D}
	for i, l := range s.Labels {
		if l != 3 {
			keep.X = append(keep.X, s.X[i*s.D:(i+1)*s.D]...)
			keep.Labels = append(keep.Labels, l)
			keep.N++
		}
	}
	if err := features.Save(te, keep); err != nil {
		t.Fatal(err)
	}
	c := runCmd()
	c.SetArgs([]string{"--train", tr, "--test", te, "--tasks", "4", "--order", "none", "--seeds", "1", "--methods", "flycl,ncm",
		"--m", "300", "--p", "3", "--k", "90", "--lambdas", "0.1,1,10", "--out", out, "--quiet"})
	if _, _, err := capture(t, func() error { return c.ExecuteContext(context.Background()) }); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"result.json", "result.csv", "table.md"} {
		b, _ := os.ReadFile(filepath.Join(out, f))
		if strings.Contains(strings.ToLower(string(b)), "nan") {
			t.Errorf("%s has NaN:\n%s", f, b)
		}
	}
	csvText, _ := os.ReadFile(filepath.Join(out, "result.csv"))
	if !strings.Contains(string(csvText), ",n/a,") {
		t.Errorf("result.csv has no n/a cell:\n%s", csvText)
	}
	if _, err := os.Stat(filepath.Join(out, "curves.png")); err != nil {
		t.Error(err)
	}
}
