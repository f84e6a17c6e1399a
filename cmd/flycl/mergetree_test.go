package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flycl/flycl/format/modelfile"
)

// TestMergeNestedCLI: flycl merge of 4 shards at once, and nested merges
// of the tree's halves (shards 1+0 and 3+2 with --partial, then the two
// halves, each given in reverse order), write statistics with the same
// bits: both add the shards in the same binary tree.
func TestMergeNestedCLI(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.npz")
	writeBlobs(t, train, 2, 60)
	cfg := []string{"--m", "120", "--p", "4", "--k", "40"}
	var parts []string
	for i := 0; i < 4; i++ {
		p := filepath.Join(dir, fmt.Sprintf("p%d.stats", i))
		if err := runFlycl(t, append([]string{"stats", "--features", train, "--shard", fmt.Sprintf("%d/4", i), "--out", p}, cfg...)...); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	all, a, b, nested := filepath.Join(dir, "all.stats"), filepath.Join(dir, "a.stats"), filepath.Join(dir, "b.stats"), filepath.Join(dir, "nested.stats")
	for _, args := range [][]string{
		{"merge", parts[2], parts[0], parts[3], parts[1], "--out", all},
		{"merge", parts[1], parts[0], "--out", a, "--partial"},
		{"merge", parts[3], parts[2], "--out", b, "--partial"},
		{"merge", b, a, "--out", nested},
	} {
		if err := runFlycl(t, args...); err != nil {
			t.Fatalf("flycl %v: %v", args, err)
		}
	}
	x, err := modelfile.LoadStats(all)
	if err != nil {
		t.Fatal(err)
	}
	y, err := modelfile.LoadStats(nested)
	if err != nil {
		t.Fatal(err)
	}
	if x.Stats.N != y.Stats.N || !slices.Equal(x.Stats.G, y.Stats.G) || !slices.Equal(x.Stats.S, y.Stats.S) || !slices.Equal(x.Stats.Counts, y.Stats.Counts) {
		t.Fatal("nested merges of the tree's halves give other statistics than one merge of the 4 shards")
	}
}
