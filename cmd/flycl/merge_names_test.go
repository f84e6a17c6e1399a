package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
)

// TestMergeIncompleteSets: flycl merge learns only a whole split of one
// source: a missing shard (0/3 + 2/3), shards of two feature files, and
// one file split two ways (0/3 + 1/2) are refused with an
// *modelfile.IncompleteError naming what is missing or different, and
// no model file is written; --partial merges them, and the model holds
// exactly the samples of the shards given. The same shard twice is
// refused even with --partial (it would count samples twice).
func TestMergeIncompleteSets(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.npz"), filepath.Join(dir, "b.npz")
	writeBlobs(t, a, 1, 30) // 120 rows
	writeBlobs(t, b, 2, 30)
	cfg := []string{"--m", "120", "--p", "4", "--k", "40", "--lambdas", "0.1,1,10,100"}
	shard := func(file, s string) string {
		p := filepath.Join(dir, filepath.Base(file)+"-"+strings.Replace(s, "/", "of", 1)+".stats")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		if err := runFlycl(t, append([]string{"stats", "--features", file, "--shard", s, "--out", p}, cfg...)...); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name    string
		parts   []string
		samples int    // rows the parts hold
		refused string // "" complete; else in the error without --partial
		always  string // refused with --partial too
	}{
		{"complete", []string{shard(a, "0/3"), shard(a, "1/3"), shard(a, "2/3")}, 120, "", ""},
		{"missing 1/3", []string{shard(a, "0/3"), shard(a, "2/3")}, 80, "missing shard 1/3 of features sha256:", ""},
		{"mixed source", []string{shard(a, "0/2"), shard(b, "1/2")}, 120, "2 different sources", ""},
		{"mixed N", []string{shard(a, "0/3"), shard(a, "1/2")}, 100, "N = 2 and 3", ""},
		{"duplicated", []string{shard(a, "0/2"), shard(a, "1/2"), shard(a, "1/2")}, 0, "same shard twice", "same shard twice"},
	} {
		for _, partial := range []bool{false, true} {
			model := filepath.Join(dir, strings.ReplaceAll(tc.name, "/", "of")+map[bool]string{false: ".flycl", true: "-partial.flycl"}[partial])
			args := append([]string{"merge", "--model", model}, tc.parts...)
			if partial {
				args = append(args, "--partial")
			}
			_, err := runCLI(t, args...)
			want := tc.refused
			if partial {
				want = tc.always
			}
			if want != "" {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("%s (partial %v): %v, want an error about %q", tc.name, partial, err, want)
				}
				var ie *modelfile.IncompleteError
				if !partial && tc.always == "" && !errors.As(err, &ie) {
					t.Errorf("%s: %v is not an *IncompleteError", tc.name, err)
				}
				if _, err := os.Stat(model); err == nil {
					t.Errorf("%s (partial %v): a refused merge wrote %s", tc.name, partial, model)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s (partial %v): %v", tc.name, partial, err)
				continue
			}
			f, err := modelfile.Load(model)
			if err != nil {
				t.Fatal(err)
			}
			if n := f.Snapshot.Samples(); n != tc.samples {
				t.Errorf("%s (partial %v): model holds %d samples, the shards %d", tc.name, partial, n, tc.samples)
			}
		}
	}
	// merged in stages: the intermediate merge of part of the split needs
	// --partial; the last one checks the whole set and learns it
	half := filepath.Join(dir, "half.stats")
	if _, err := runCLI(t, "merge", shard(a, "0/3"), shard(a, "1/3"), "--out", half); err == nil || !strings.Contains(err.Error(), "missing shard 2/3") {
		t.Fatalf("intermediate merge without --partial: %v", err)
	}
	if _, err := runCLI(t, "merge", shard(a, "0/3"), shard(a, "1/3"), "--out", half, "--partial"); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, "merge", half, shard(a, "2/3"), "--model", filepath.Join(dir, "staged.flycl")); err != nil {
		t.Fatalf("last merge of a whole set in stages: %v", err)
	}
}

// TestDuplicateClassNamesRefused: a feature file whose class_names name
// two labels alike (['dup', 'dup']) is refused by flycl learn as by flycl
// stats, with the same *flycl.NameError, and writes nothing.
func TestDuplicateClassNamesRefused(t *testing.T) {
	dir := t.TempDir()
	dup, ok := filepath.Join(dir, "dup.npz"), filepath.Join(dir, "ok.npz")
	blobs(t, dup, 1, 6, 10, "dup", "dup")
	blobs(t, ok, 2, 6, 10, "a1", "b2")
	cfg := []string{"--m", "100", "--p", "3", "--k", "30"}
	model, st := filepath.Join(dir, "m.flycl"), filepath.Join(dir, "p.stats")
	for _, args := range [][]string{
		{"learn", "--model", model, "--features", dup},
		{"stats", "--features", dup, "--out", st},
		{"learn", "--model", model, "--features", ok, "--class-names", "x,x"},
		{"learn", "--model", model, "--features", ok, "--class-names", "x,x\u200b"},
		{"stats", "--features", ok, "--out", st, "--class-names", "x,x\u200b"},
	} {
		_, err := runCLI(t, append(args, cfg...)...)
		var ne *flycl.NameError
		if !errors.As(err, &ne) || !strings.Contains(err.Error(), "two labels") && !strings.Contains(err.Error(), "U+200B") {
			t.Errorf("%s: %v, want a *flycl.NameError", strings.Join(args, " "), err)
		}
	}
	for _, p := range []string{model, st} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("a refused command wrote %s", p)
		}
	}
}

// TestLearnPrintsRaisedLambda: flycl learn --lambda 1e-300 says which λ
// was requested and which used, with a warning. 1e-300 is 0 in float32
// and 20 samples give G rank at most 20 < m = 100, so the solve must
// raise it; --lambda 5 needs no raise and prints no warning.
func TestLearnPrintsRaisedLambda(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.npz")
	blobs(t, train, 1, 6, 10, "cat", "dog")
	for _, tc := range []struct {
		lambda, want string
		warn         bool
	}{
		{"1e-300", "(fixed, requested 1e-300)", true},
		{"5", "lambda 5 (fixed)\n", false},
	} {
		out, err := runCLI(t, "learn", "--model", filepath.Join(dir, tc.lambda+".flycl"), "--features", train, "--m", "100", "--p", "3", "--k", "30", "--lambda", tc.lambda)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, tc.want) || strings.Contains(out, "warning: λ 1e-300 was requested, ") != tc.warn {
			t.Errorf("--lambda %s printed\n%s\nwant %q and a warning: %v", tc.lambda, out, tc.want, tc.warn)
		}
	}
}

// TestMergeConfigAgainstModel: merging into an existing model takes the
// model flags as learn does: a value equal to the model's is accepted
// (--gcv-scope task on a task-scope model), another is refused as fixed
// (--gcv-scope all), and the refused merge leaves the model as it was.
func TestMergeConfigAgainstModel(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.npz")
	writeBlobs(t, a, 1, 20)
	cfg := []string{"--m", "80", "--p", "4", "--k", "24"}
	var parts []string
	for _, s := range []string{"0/2", "1/2"} {
		p := filepath.Join(dir, strings.Replace(s, "/", "of", 1)+".stats")
		if err := runFlycl(t, append([]string{"stats", "--features", a, "--shard", s, "--out", p}, cfg...)...); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	model := filepath.Join(dir, "m.flycl")
	if _, err := runCLI(t, append(append([]string{"merge", "--model", model, "--gcv-scope", "task", "--lambdas", "0.1,1,10"}, cfg...), parts...)...); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, append([]string{"merge", "--model", model, "--gcv-scope", "task"}, parts...)...); err != nil {
		t.Errorf("merge with the model's own --gcv-scope: %v", err)
	}
	before, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	_, err = runCLI(t, append([]string{"merge", "--model", model, "--gcv-scope", "all"}, parts...)...)
	if err == nil || !strings.Contains(err.Error(), "--gcv-scope all, but the model has task") {
		t.Errorf("merge with another --gcv-scope: %v, want it refused as fixed", err)
	}
	if after, _ := os.ReadFile(model); string(after) != string(before) {
		t.Error("the refused merge changed the model file")
	}
}
