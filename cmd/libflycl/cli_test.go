package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/format/modelfile"
)

// TestCLIModel: a model file the flycl command writes (flycl learn, one
// task per run, with its journal) loads in the library with the λ and
// the scores, to the bit, of the library's own learn of the same
// features with the same configuration; and the library takes its last
// learn back through the file's journal to the library's own unlearn.
func TestCLIModel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the flycl command")
	}
	dir := t.TempDir()
	flycl := filepath.Join(dir, "flycl")
	build := exec.Command(goCommand(), "build", "-o", flycl, "../flycl")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/flycl: %v\n%s", err, out)
	}
	t1, t2, _, xt := testData()
	modelPath := filepath.Join(dir, "cli.flycl")
	for i, tk := range []task{t1, t2} {
		names := names12[2*i : 2*i+2]
		labels := make([]int, len(tk.y))
		for j, l := range tk.y {
			labels[j] = int(l)
		}
		f := filepath.Join(dir, "task.npz")
		if err := features.Save(f, &features.Set{X: tk.x, N: len(tk.y), D: testD, Labels: labels, ClassNames: names}); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(flycl, "learn", "--features", f, "--model", modelPath,
			"--m", "256", "--p", "8", "--k", "64", "--w-seed", "7", "--lambda-scale", "relative")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("flycl learn: %v\n%s", err, out)
		}
	}

	r := newRegistry()
	cli, err := r.load(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	own, err := r.newModel(testConfig, testD)
	if err != nil {
		t.Fatal(err)
	}
	mc, _ := r.model(cli)
	mo, _ := r.model(own)
	var lambdas []float64
	for i, tk := range []task{t1, t2} {
		l, err := mo.learn(slices.Clone(tk.x), len(tk.y), testD, tk.y, names12[2*i:2*i+2], 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		lambdas = append(lambdas, l)
	}
	compare := func(what string) {
		t.Helper()
		var fc, fo modelFacts
		var sc, so []float32
		for _, c := range []struct {
			m *model
			f *modelFacts
			s *[]float32
		}{{mc, &fc, &sc}, {mo, &fo, &so}} {
			err := c.m.read(func(dm *deployModel, p *predictor) error {
				*c.f = factsOf(dm)
				*c.s = make([]float32, nTest*p.classes())
				return p.scores(ctxBackground, xt, *c.s)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if fc.lambda != fo.lambda || !slices.Equal(fc.names, fo.names) || !slices.Equal(fc.counts, fo.counts) {
			t.Errorf("%s: flycl learn's model: λ %g, classes %q %v; the library's: λ %g, classes %q %v", what,
				fc.lambda, fc.names, fc.counts, fo.lambda, fo.names, fo.counts)
		}
		if !slices.Equal(sc, so) {
			t.Errorf("%s: the scores differ", what)
		}
	}
	compare("after two tasks")
	if got := factsNow(t, mc).lambda; got != lambdas[1] {
		t.Errorf("λ of flycl learn's model %g, of the library's learn %g", got, lambdas[1])
	}
	if err := mc.unlearn(); err != nil {
		t.Fatalf("unlearn through the journal of flycl learn's file: %v", err)
	}
	if err := mo.unlearn(); err != nil {
		t.Fatal(err)
	}
	compare("after an unlearn")
	if _, err := os.Stat(modelfile.JournalPath(modelPath)); err != nil {
		t.Errorf("flycl learn wrote no journal: the unlearn above was not through one: %v", err)
	}
}

func factsNow(t *testing.T, m *model) modelFacts {
	var f modelFacts
	if err := m.read(func(dm *deployModel, _ *predictor) error { f = factsOf(dm); return nil }); err != nil {
		t.Fatal(err)
	}
	return f
}

// goCommand is the go command of this toolchain.
func goCommand() string {
	if p := filepath.Join(os.Getenv("GOROOT"), "bin", "go"); os.Getenv("GOROOT") != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "go"
}
