package main

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/features"
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

func writeBlobs(t *testing.T, path string, seed uint64, perClass int) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	s := &features.Set{D: 6}
	for c := 0; c < 4; c++ {
		mr := rand.New(rand.NewPCG(uint64(c), 2))
		mean := make([]float64, 6)
		for j := range mean {
			mean[j] = 3 * mr.NormFloat64()
		}
		for i := 0; i < perClass; i++ {
			for j := range mean {
				s.X = append(s.X, float32(mean[j]+r.NormFloat64()))
			}
			s.Labels = append(s.Labels, c)
			s.N++
		}
	}
	if err := features.Save(path, s); err != nil {
		t.Fatal(err)
	}
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
	ew.SetArgs([]string{"--m", "300", "--d", "6", "--p", "3", "--seed", "0", "--out", wf})
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
