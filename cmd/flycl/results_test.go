package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
