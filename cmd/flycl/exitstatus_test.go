package main

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/format/npz"
)

// writeNPZ writes a feature file as given, without the checks
// features.Save makes: the bad files the commands must refuse.
func writeNPZ(t *testing.T, path string, x []float32, n, d int, labels []int64, names []string) {
	t.Helper()
	w, err := npz.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Float32("features", x, n, d)
	w.Int64("labels", labels)
	if names != nil {
		w.Strings("class_names", names)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestExitStatuses runs the commands on refused input of every class
// and checks the exit status main gives its error (exitCode: 2 for input
// refused, 3 for a model file held by another writer, 1 for the rest)
// and that the message names the file or field at fault. Each refusal
// leaves the model file as it was.
func TestExitStatuses(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	cfg := []string{"--m", "100", "--p", "3", "--k", "30", "--lambdas", "0.1,1,10"}
	model := p("m.flycl")
	good := p("good.npz")
	blobs(t, good, 1, 6, 10, "a1", "b2")
	if _, err := runCLI(t, append([]string{"learn", "--model", model, "--features", good}, cfg...)...); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}

	x := make([]float32, 4*6)
	for i := range x {
		x[i] = float32(i%7) - 3
	}
	nan := append([]float32(nil), x...)
	nan[9] = float32(math.NaN())
	writeNPZ(t, p("nan.npz"), nan, 4, 6, []int64{0, 0, 1, 1}, []string{"a1", "b2"})
	writeNPZ(t, p("d5.npz"), x[:20], 4, 5, []int64{0, 0, 1, 1}, []string{"a1", "b2"})
	writeNPZ(t, p("neg.npz"), x, 4, 6, []int64{0, -5, 1, 1}, []string{"a1", "b2"})
	writeNPZ(t, p("names.npz"), x, 4, 6, []int64{0, 3, 1, 1}, []string{"a1", "b2"})
	if err := os.WriteFile(p("junk.npz"), []byte("this is not a zip archive at all, only text"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("junk.flycl"), []byte("not a model"), 0o644); err != nil {
		t.Fatal(err)
	}

	// statistics shards for the merges
	shard := func(file, s string, extra ...string) string {
		out := p(filepath.Base(file) + "-" + strings.Replace(s, "/", "of", 1) + strings.Join(extra, "") + ".stats")
		args := append([]string{"stats", "--features", file, "--shard", s, "--out", out}, cfg...)
		if _, err := runCLI(t, append(args, extra...)...); err != nil {
			t.Fatal(err)
		}
		return out
	}
	s0, s2 := shard(good, "0/3"), shard(good, "2/3")
	seed := shard(good, "1/3", "--w-seed", "99")

	lk, err := modelfile.TakeLock(context.Background(), p("held.flycl"), modelfile.LockOptions{Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()

	for _, c := range []struct {
		name string
		args []string
		want int
		msg  []string // fragments of the message (file, field)
	}{
		{"NaN feature", []string{"learn", "--model", model, "--features", p("nan.npz")}, exitInput, []string{"nan.npz", "sample 1, dimension 3"}},
		{"wrong d", []string{"learn", "--model", model, "--features", p("d5.npz")}, exitInput, []string{"d5.npz", "d=6"}},
		{"negative label", []string{"learn", "--model", model, "--features", p("neg.npz")}, exitInput, []string{"neg.npz", "labels[1] = -5"}},
		{"label without a name", []string{"learn", "--model", model, "--features", p("names.npz")}, exitInput, []string{"names.npz", "label 3"}},
		{"junk npz", []string{"learn", "--model", model, "--features", p("junk.npz")}, exitInput, []string{"junk.npz"}},
		{"predict NaN", []string{"predict", "--model", model, "--features", p("nan.npz")}, exitInput, []string{"nan.npz", "dimension 3"}},
		{"predict wrong d", []string{"predict", "--model", model, "--features", p("d5.npz")}, exitInput, []string{"d5.npz", "d=6"}},
		{"stats junk npz", []string{"stats", "--features", p("junk.npz"), "--shard", "0/1", "--out", p("x.stats"), "--m", "100", "--p", "3", "--k", "30"}, exitInput, []string{"junk.npz"}},
		{"merge missing shard", []string{"merge", "--model", p("merged.flycl"), s0, s2}, exitInput, []string{"missing shard 1/3"}},
		{"merge same shard twice", []string{"merge", "--model", p("merged.flycl"), "--partial", s0, s0}, exitInput, []string{"same shard twice"}},
		{"merge other W", []string{"merge", "--model", p("merged.flycl"), "--partial", s0, seed}, exitInput, []string{seed}},
		{"merge into another model", []string{"merge", "--model", model, "--partial", seed}, exitInput, []string{model}},
		{"merge junk statistics", []string{"merge", "--model", p("merged.flycl"), p("junk.npz")}, exitInput, []string{"junk.npz"}},
		{"merge missing file", []string{"merge", "--model", p("merged.flycl"), p("absent.stats")}, exitFailure, []string{"absent.stats"}},
		{"unknown class", []string{"forget", "--model", model, "--class", "zz"}, exitInput, []string{"zz"}},
		{"flag value", []string{"learn", "--model", model, "--features", good, "--m", "many"}, exitInput, []string{"--m", "many"}},
		{"unknown flag", []string{"predict", "--model", model, "--frobnicate"}, exitInput, []string{"--frobnicate"}},
		{"locked", []string{"learn", "--model", p("held.flycl"), "--features", good}, exitLocked, []string{"held.flycl"}},
		{"damaged model file", []string{"predict", "--model", p("junk.flycl"), "--features", good}, exitFailure, []string{"junk.flycl"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := runCLI(t, append(c.args, cfg...)[:len(c.args)]...)
			if err == nil {
				t.Fatalf("flycl %s: no error", strings.Join(c.args, " "))
			}
			if got := exitCode(err); got != c.want {
				t.Errorf("flycl %s: exit status %d, want %d (%v)", strings.Join(c.args, " "), got, c.want, err)
			}
			for _, f := range c.msg {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("message %q does not name %q", err, f)
				}
			}
		})
	}
	if after, err := os.ReadFile(model); err != nil || string(after) != string(before) {
		t.Errorf("a refused command changed %s (%v)", model, err)
	}

	// the built binary: main gives the status and prints the message
	if testing.Short() {
		return
	}
	bin := buildFlycl(t)
	for _, c := range []struct {
		args []string
		want int
		msg  string
	}{
		{[]string{"learn", "--model", model, "--features", p("nan.npz")}, exitInput, "nan.npz"},
		{[]string{"learn", "--model", p("held.flycl"), "--features", good}, exitLocked, "held.flycl"},
		{[]string{"predict", "--model", p("junk.flycl"), "--features", good}, exitFailure, "junk.flycl"},
	} {
		var stderr strings.Builder
		cmd := exec.Command(bin, c.args...)
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != c.want || !strings.Contains(stderr.String(), c.msg) {
			t.Errorf("flycl %s: %v, stderr %q; want exit status %d naming %s", strings.Join(c.args, " "), err, stderr.String(), c.want, c.msg)
		}
	}
}
