package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/cmd/internal/clitest"
	"github.com/flycl/flycl/format/features"
)

// blobs writes a labelled feature file: perClass samples of each named
// class around a mean fixed by the name.
func blobs(t *testing.T, path string, seed uint64, d, perClass int, names ...string) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	s := &features.Set{D: d, ClassNames: names}
	for c, name := range names {
		mr := rand.New(rand.NewPCG(uint64(name[0])*7919+uint64(name[1]), 2))
		mean := make([]float64, d)
		for j := range mean {
			mean[j] = 4 * mr.NormFloat64()
		}
		for i := 0; i < perClass; i++ {
			for j := 0; j < d; j++ {
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

// runCLI runs the command line and returns its standard output.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return clitest.Run(t, newRoot, args...)
}

// TestModelCommands drives learn, predict, forget, classes and info on
// feature files: creating and extending a model, refusing mismatched
// input without touching the file, exact forgetting equal to never
// learning the class, and dropping a column.
func TestModelCommands(t *testing.T) {
	dir := t.TempDir()
	train, test, owl, narrow := filepath.Join(dir, "train.npz"), filepath.Join(dir, "test.npz"), filepath.Join(dir, "owl.npz"), filepath.Join(dir, "narrow.npz")
	blobs(t, train, 1, 6, 20, "cat", "dog", "fox")
	blobs(t, test, 2, 6, 10, "cat", "dog", "fox")
	blobs(t, owl, 3, 6, 15, "owl")
	blobs(t, narrow, 4, 5, 5, "cat")
	model, ref := filepath.Join(dir, "m.flycl"), filepath.Join(dir, "ref.flycl")
	cfg := []string{"--m", "200", "--p", "3", "--k", "60", "--lambdas", "0.1,1,10,100"}

	// --no-journal: the drop of a column below needs a class the journal
	// does not hold (with one, forget without data is exact from it)
	out, err := runCLI(t, append([]string{"learn", "--model", model, "--features", train, "--no-journal"}, cfg...)...)
	if err != nil || !strings.Contains(out, "classes added (3): cat, dog, fox") || !strings.Contains(out, "version 1, 3 classes, 60 samples") {
		t.Fatalf("learn: %v\n%s", err, out)
	}
	if _, err := runCLI(t, append([]string{"learn", "--model", ref, "--features", train}, cfg...)...); err != nil {
		t.Fatal(err)
	}
	out, err = runCLI(t, "learn", "--model", model, "--features", owl)
	if err != nil || !strings.Contains(out, "classes added (1): owl") || !strings.Contains(out, "version 2, 4 classes, 75 samples") {
		t.Fatalf("learn owl: %v\n%s", err, out)
	}
	// Refused input leaves the file untouched.
	before, _ := os.ReadFile(model)
	for _, bad := range [][]string{
		{"learn", "--model", model, "--features", narrow},
		{"learn", "--model", model, "--features", owl, "--m", "300"},
		{"learn", "--model", model, "--features", owl, "--lambdas", "1,2"},
		{"learn", "--model", model, "--features", train, "--class-names", "a,b"},
	} {
		if _, err := runCLI(t, bad...); err == nil {
			t.Errorf("%v: no error", bad)
		}
		if after, _ := os.ReadFile(model); !bytes.Equal(before, after) {
			t.Fatalf("%v changed the model file", bad)
		}
	}

	type result struct {
		Predictions []struct {
			Truth string
			Top   []struct {
				Name  string
				Score float32
			}
		}
		Accuracy struct {
			Accuracy  float64
			Evaluated int
		}
	}
	predict := func(path string) result {
		out, err := runCLI(t, "predict", "--model", path, "--features", test, "--format", "json", "--top", "2")
		if err != nil {
			t.Fatal(err)
		}
		var r result
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return r
	}
	r := predict(model)
	if len(r.Predictions) != 30 || len(r.Predictions[0].Top) != 2 || r.Accuracy.Evaluated != 30 || r.Accuracy.Accuracy < 0.9 {
		t.Fatalf("predict: %d predictions, accuracy %+v", len(r.Predictions), r.Accuracy)
	}

	out, err = runCLI(t, "forget", "--model", model, "--class", "owl", "--features", owl)
	if err != nil || !strings.Contains(out, `forgot "owl" exactly: subtracted its 15 samples`) {
		t.Fatalf("forget owl: %v\n%s", err, out)
	}
	got, want := predict(model), predict(ref)
	for i := range got.Predictions {
		if got.Predictions[i].Top[0].Name != want.Predictions[i].Top[0].Name {
			t.Fatalf("sample %d: forgotten model predicts %s, never-seen model %s", i, got.Predictions[i].Top[0].Name, want.Predictions[i].Top[0].Name)
		}
	}
	out, err = runCLI(t, "forget", "--model", model, "--class", "cat")
	if err != nil || !strings.Contains(out, "G still holds its 20 samples") {
		t.Fatalf("drop cat: %v\n%s", err, out)
	}
	if _, err := runCLI(t, "forget", "--model", model, "--class", "cat"); err == nil {
		t.Error("forgetting an absent class: no error")
	}
	out, err = runCLI(t, "classes", "--model", model)
	if err != nil || strings.Contains(out, "cat") || !strings.Contains(out, "dog   1      20") {
		t.Fatalf("classes: %v\n%s", err, out)
	}
	// Online: mini-batches of 7 with a fixed λ give the classifier of one
	// task with that λ (flycl.TestOnlineEqualsBatch); here the steps and
	// the classes are what the command reports.
	online := filepath.Join(dir, "online.flycl")
	out, err = runCLI(t, append([]string{"learn", "--model", online, "--features", train, "--online", "--online-batch", "7", "--lambda", "10"}, cfg...)...)
	if err != nil || !strings.Contains(out, "in 9 step(s)") || !strings.Contains(out, "lambda 10 (fixed)") {
		t.Fatalf("online: %v\n%s", err, out)
	}
	out, err = runCLI(t, "learn", "--model", online, "--features", test)
	if err != nil || !strings.Contains(out, "classes extended (3): cat, dog, fox") || !strings.Contains(out, "3 classes, 90 samples") {
		t.Fatalf("more samples of known classes: %v\n%s", err, out)
	}
	if _, err := runCLI(t, "learn", "--model", online, "--features", owl, "--online-batch", "7"); err == nil {
		t.Error("--online-batch without --online: no error")
	}

	out, err = runCLI(t, "info", "--model", model)
	if err != nil || !strings.Contains(out, "version       4") || !strings.Contains(out, "d=6 m=200 p=3 k=60") || !strings.Contains(out, "forget") {
		t.Fatalf("info: %v\n%s", err, out)
	}
	// flycl info FILE is flycl info --model FILE; two different files are refused.
	if pos, err := runCLI(t, "info", model); err != nil || pos != out {
		t.Errorf("info FILE: %v\n%s\nwant the output of info --model FILE:\n%s", err, pos, out)
	}
	if _, err := runCLI(t, "info", model, "--model", online); err == nil {
		t.Error("info FILE --model OTHER: no error")
	}
}

// TestLearnRefusesConflictingFlags: on an existing model every model flag
// given explicitly must agree with the model (--gcv-scope, --lambda-scale,
// --gcv and --projection used to be ignored silently), and when creating
// a model from a given W (--w) an explicit --m, --p or --w-seed that W
// would override is refused. A refused command leaves the file as it was.
func TestLearnRefusesConflictingFlags(t *testing.T) {
	dir := t.TempDir()
	train, model := filepath.Join(dir, "train.npz"), filepath.Join(dir, "m.flycl")
	blobs(t, train, 1, 6, 10, "cat", "dog")
	if _, err := runCLI(t, "learn", "--model", model, "--features", train, "--m", "60", "--p", "3", "--k", "20", "--lambdas", "1,10"); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(model)
	for _, args := range [][]string{
		{"--gcv-scope", "all"}, {"--lambda-scale", "relative"}, {"--gcv", "dual"}, {"--projection", "dense"},
		{"--m", "61"}, {"--lambdas", "1,100"},
	} {
		_, err := runCLI(t, append([]string{"learn", "--model", model, "--features", train}, args...)...)
		if err == nil || !strings.Contains(err.Error(), args[0]) || !strings.Contains(err.Error(), "fixed when it is created") {
			t.Errorf("%v on an existing model: %v", args, err)
		}
		if after, _ := os.ReadFile(model); string(after) != string(before) {
			t.Fatalf("%v: a refused learn changed the model file", args)
		}
	}
	// --journal and --no-journal contradict each other: refused, naming both
	_, err := runCLI(t, "learn", "--model", model, "--features", train, "--journal", "--no-journal")
	if err == nil || !strings.Contains(err.Error(), "journal no-journal") {
		t.Errorf("--journal --no-journal: %v", err)
	}
	if after, _ := os.ReadFile(model); string(after) != string(before) {
		t.Fatal("--journal --no-journal: a refused learn changed the model file")
	}
	// The model's own values are accepted.
	if _, err := runCLI(t, "learn", "--model", model, "--features", train, "--gcv-scope", "task", "--lambda-scale", "absolute", "--m", "60"); err != nil {
		t.Fatalf("agreeing flags: %v", err)
	}

	wf := filepath.Join(dir, "w.npz")
	writeW(t, wf, 50, 6, 3, 0) // as flycl-lab export-w writes it
	for _, args := range [][]string{{"--m", "60"}, {"--p", "4"}, {"--w-seed", "3"}} {
		wm := filepath.Join(dir, "w.flycl")
		_, err := runCLI(t, append([]string{"learn", "--model", wm, "--features", train, "--w", wf, "--k", "20"}, args...)...)
		if err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("--w with %v: %v", args, err)
		}
		if _, err := os.Stat(wm); err == nil {
			t.Fatalf("--w with %v: a refused learn created the model", args)
		}
	}
	if _, err := runCLI(t, "learn", "--model", filepath.Join(dir, "w.flycl"), "--features", train, "--w", wf, "--k", "20", "--m", "50"); err != nil {
		t.Fatalf("--w with an agreeing --m: %v", err)
	}
}

// TestClassNamesTooFew: --class-names with fewer names than the feature
// file's labels is refused naming the flag and the count it needs (input
// refused), not at the first sample without a name.
func TestClassNamesTooFew(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.npz")
	blobs(t, train, 1, 6, 4, "cat", "dog", "owl")
	_, err := runCLI(t, "learn", "--model", filepath.Join(dir, "m.flycl"), "--features", train, "--class-names", "a,b", "--m", "60", "--p", "3", "--k", "20")
	if err == nil || !strings.Contains(err.Error(), "--class-names gives 2 class names") || !strings.Contains(err.Error(), "give 3 names") || exitCode(err) != exitInput {
		t.Fatalf("--class-names a,b for 3 labels: %v (exit status %d)", err, exitCode(err))
	}
}
