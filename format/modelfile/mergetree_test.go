package modelfile

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/ridge"
)

// treeRef is the sum of shards [lo, hi) as the merge's tree defines it,
// written out recursively: a range of one shard is that shard; a longer
// range [lo, lo+2ˡ) (clipped at the last shard) is its left half plus its
// right half, and a range whose right half holds no shard is its left
// half.
func treeRef(t *testing.T, sts []*ridge.Stats, lo, size int) *ridge.Stats {
	if size == 1 {
		return sts[lo].Clone()
	}
	left := treeRef(t, sts, lo, size/2)
	if lo+size/2 >= len(sts) {
		return left
	}
	if err := left.Merge(treeRef(t, sts, lo+size/2, size/2)); err != nil {
		t.Fatal(err)
	}
	return left
}

func sameStats(a, b *ridge.Stats) bool {
	return a.N == b.N && slices.Equal(a.Labels, b.Labels) && slices.Equal(a.Counts, b.Counts) &&
		slices.Equal(a.G, b.G) && slices.Equal(a.S, b.S)
}

// TestMergeStatsTree: the shards of a task merged in one go, in random
// orders, and in random nested merges whose intermediate files each hold
// a node of the tree (written and read back), all give bit for bit the
// tree's sum written out from its definition (treeRef) — the sum the Beam
// pipeline computes over the same shards. Adding the shards from left to
// right (what the merge did before) differs in the last bits for some
// shard count, so the test sees the order of additions.
func TestMergeStatsTree(t *testing.T) {
	const d = 20
	base, err := flycl.New(statsCfg, d)
	if err != nil {
		t.Fatal(err)
	}
	x, y := statsData(3, 300, d, 4)
	r := rand.New(rand.NewPCG(11, 12))
	seqDiffers := false
	for _, ns := range []int{3, 5, 7, 8} {
		files := shardFiles(t, base, x, y, d, ns, "train")
		parts := decodeAll(t, files)
		sts := make([]*ridge.Stats, ns)
		for i, p := range parts {
			sts[i] = p.Stats
		}
		size := 1
		for size < ns {
			size *= 2
		}
		want := treeRef(t, sts, 0, size)
		seq := sts[0].Clone()
		for _, s := range sts[1:] {
			seq.Merge(s)
		}
		if !slices.Equal(seq.G, want.G) {
			seqDiffers = true
		}
		for trial := 0; trial < 6; trial++ {
			// a random cut of the shards into aligned runs of 2ˡ (tree
			// nodes), each merged on its own (partial) and read back
			var nodes []*StatsFile
			for lo := 0; lo < ns; {
				l := 0
				for l < 3 && lo%(2<<l) == 0 && r.IntN(2) == 0 {
					l++
				}
				hi := min(ns, lo+1<<l)
				group := decodeAll(t, files[lo:hi])
				r.Shuffle(len(group), func(i, j int) { group[i], group[j] = group[j], group[i] })
				m, err := MergeStats(group...)
				if err != nil {
					t.Fatal(err)
				}
				var b bytes.Buffer
				if err := EncodeStats(&b, m); err != nil {
					t.Fatal(err)
				}
				if m, err = DecodeStats(&b); err != nil {
					t.Fatal(err)
				}
				nodes = append(nodes, m)
				lo = hi
			}
			r.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
			got, err := MergeStats(nodes...)
			if err != nil {
				t.Fatal(err)
			}
			if !sameStats(got.Stats, want) {
				t.Fatalf("%d shards merged as %d nodes in random order: statistics differ from the tree's sum", ns, len(nodes))
			}
			if err := CheckComplete(got.Shards); err != nil {
				t.Fatalf("%d shards: %v", ns, err)
			}
		}
	}
	if !seqDiffers {
		t.Error("adding the shards from left to right gives the tree's bits for every shard count: the data do not test the order")
	}
}

// TestMergeStatsOtherParts: parts that are not nodes of the tree over
// their shards (shards 1 and 2 of 4 merged together) merge in any order to
// the same bits, and every sample is counted once.
func TestMergeStatsOtherParts(t *testing.T) {
	const d = 20
	base, err := flycl.New(statsCfg, d)
	if err != nil {
		t.Fatal(err)
	}
	x, y := statsData(4, 200, d, 3)
	files := shardFiles(t, base, x, y, d, 4, "train")
	mid, err := MergeStats(decodeAll(t, files[1:3])...)
	if err != nil {
		t.Fatal(err)
	}
	var first *ridge.Stats
	r := rand.New(rand.NewPCG(1, 1))
	for trial := 0; trial < 4; trial++ {
		ps := append(decodeAll(t, [][]byte{files[0], files[3]}), mid)
		r.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
		got, err := MergeStats(ps...)
		if err != nil {
			t.Fatal(err)
		}
		if got.Stats.N != len(y) {
			t.Fatalf("merged %d samples, want %d", got.Stats.N, len(y))
		}
		if first == nil {
			first = got.Stats
		} else if !sameStats(first, got.Stats) {
			t.Fatal("the merge depends on the order of the parts")
		}
	}
}
