package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/format/modelfile"
)

func runFlycl(t *testing.T, args ...string) error {
	t.Helper()
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(os.Stderr)
	return root.ExecuteContext(context.Background())
}

// TestStatsMergeCLI: flycl stats on 3 shards of a feature file, merged by
// flycl merge, gives a model with the same λ, classes and predictor as
// merging the single shard 0/1; the same shard twice is refused and leaves
// the model file as it was.
func TestStatsMergeCLI(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.npz")
	writeBlobs(t, train, 1, 60)
	cfg := []string{"--m", "120", "--p", "4", "--k", "40", "--lambdas", "0.1,1,10,100,1000"}
	var parts []string
	for i := 0; i < 3; i++ {
		p := filepath.Join(dir, "p"+string(rune('0'+i))+".stats")
		if err := runFlycl(t, append([]string{"stats", "--features", train, "--shard", string(rune('0'+i)) + "/3", "--out", p}, cfg...)...); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	one := filepath.Join(dir, "one.stats")
	if err := runFlycl(t, append([]string{"stats", "--features", train, "--shard", "0/1", "--out", one}, cfg...)...); err != nil {
		t.Fatal(err)
	}
	m3, m1 := filepath.Join(dir, "m3.flycl"), filepath.Join(dir, "m1.flycl")
	if err := runFlycl(t, append([]string{"merge", parts[2], parts[0], parts[1], "--model", m3}, cfg...)...); err != nil {
		t.Fatal(err)
	}
	if err := runFlycl(t, append([]string{"merge", one, "--model", m1}, cfg...)...); err != nil {
		t.Fatal(err)
	}
	a, err := modelfile.Load(m3)
	if err != nil {
		t.Fatal(err)
	}
	b, err := modelfile.Load(m1)
	if err != nil {
		t.Fatal(err)
	}
	sa, sb := a.Snapshot.State(), b.Snapshot.State()
	if sa.Lambda != sb.Lambda || sa.Lambda == 0 {
		t.Fatalf("λ %g from 3 shards, %g from one", sa.Lambda, sb.Lambda)
	}
	if strings.Join(sa.Names, ",") != strings.Join(sb.Names, ",") || len(sa.Names) != 4 {
		t.Fatalf("classes %v vs %v", sa.Names, sb.Names)
	}
	if a.Snapshot.Samples() != 240 || b.Snapshot.Samples() != 240 {
		t.Fatalf("samples %d, %d", a.Snapshot.Samples(), b.Snapshot.Samples())
	}
	before, _ := os.ReadFile(m3)
	err = runFlycl(t, "merge", parts[0], parts[0], "--model", m3)
	if err == nil || !strings.Contains(err.Error(), "same shard twice") {
		t.Fatalf("same shard twice: %v", err)
	}
	if after, _ := os.ReadFile(m3); string(after) != string(before) {
		t.Fatal("a refused merge changed the model file")
	}
	// a shard of another configuration is refused
	other := filepath.Join(dir, "other.stats")
	if err := runFlycl(t, "stats", "--features", train, "--shard", "1/3", "--out", other, "--m", "120", "--p", "4", "--k", "30"); err != nil {
		t.Fatal(err)
	}
	if err := runFlycl(t, "merge", parts[0], other, "--out", filepath.Join(dir, "x.stats")); err == nil || !strings.Contains(err.Error(), "configuration") {
		t.Fatalf("different k: %v", err)
	}
}

// TestMergePrintsScaledGrid: with --lambda-scale relative, flycl merge
// prints the GCV scores against the λ values actually scored (the grid
// times the statistics' scale, as recorded in the model's history), and
// the λ it reports is one of them.
func TestMergePrintsScaledGrid(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.npz")
	writeBlobs(t, train, 1, 60)
	cfg := []string{"--m", "120", "--p", "4", "--k", "40", "--lambdas", "0.001,0.01,0.1,1", "--lambda-scale", "relative"}
	st, model := filepath.Join(dir, "a.stats"), filepath.Join(dir, "m.flycl")
	if err := runFlycl(t, append([]string{"stats", "--features", train, "--shard", "0/1", "--out", st}, cfg...)...); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, append([]string{"merge", st, "--model", model}, cfg...)...)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modelfile.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	h := f.Snapshot.State().History
	rec := h[len(h)-1]
	if len(rec.Grid) != 4 || rec.Grid[0] == 0.001 {
		t.Fatalf("recorded grid %v: not scaled", rec.Grid)
	}
	var want strings.Builder
	for i, v := range rec.GCV {
		fmt.Fprintf(&want, " %g:%.6g", rec.Grid[i], v)
	}
	if !strings.Contains(out, "GCV (task):"+want.String()+"\n") {
		t.Fatalf("merge printed\n%s\nwant the GCV line%s", out, want.String())
	}
}

// TestMergeRefusesHugeStatistics: statistics of features scaled by 1e20
// (float64 in the statistics file, fine there) cannot go into a model's
// float32 Gram matrix: flycl merge refuses them with the cause and the
// remedy and writes no model, where it used to write NaN coefficients
// into a file that could not be loaded again.
func TestMergeRefusesHugeStatistics(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.npz")
	writeScaledBlobs(t, train, 1, 20, 1e20)
	cfg := []string{"--m", "120", "--p", "4", "--k", "40", "--lambdas", "0.1,1,10"}
	st, model := filepath.Join(dir, "a.stats"), filepath.Join(dir, "m.flycl")
	if err := runFlycl(t, append([]string{"stats", "--features", train, "--shard", "0/1", "--out", st}, cfg...)...); err != nil {
		t.Fatal(err)
	}
	err := runFlycl(t, append([]string{"merge", st, "--model", model}, cfg...)...)
	if err == nil || !strings.Contains(err.Error(), "too large for float32") || !strings.Contains(err.Error(), "--lambda-scale relative") {
		t.Fatalf("merge of 1e20 statistics: %v", err)
	}
	if _, err := os.Stat(model); err == nil {
		t.Fatal("a refused merge wrote the model")
	}
}
