package pipeline

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/flycl/flycl/internal/sumtree"
)

// TestWorkerMemoryBound checks the bound docs/SCALE.md states for one
// worker: an extraction DoFn instance holds one G (its accumulator, reused
// by every shard) and, while a shard's statistics are emitted, one more
// (the pieces), whatever the number of shards and bundles: not one per
// shard. The DoFn is driven over 12 shards in 3 bundles as a runner does,
// each emitted piece encoded (what the runner does with it) and dropped,
// and the live heap (after a GC) measured at every emission. (A tree node
// holds two pieces of one block: TestNodeAddsInPlace.)
func TestWorkerMemoryBound(t *testing.T) {
	path, _ := syntheticFeatures(t, 120)
	cfg := smallConfig()
	cfg.M, cfg.K = 1200, 240
	opt := Options{Features: path, Config: cfg, ShardSize: 10, BatchSize: 10, BlockRows: 250, FailShard: -1}
	plan, err := MakePlan(opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.defaults()
	ctx := context.Background()
	gBytes := float64(8 * cfg.M * (cfg.M + 1) / 2)
	live := func() float64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapAlloc)
	}
	before := live()
	fn := &extractFn{Opt: opt, Dim: plan.Dim, Leaves: len(plan.Shards)}
	if err := fn.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	var worst float64
	emitted := 0
	emit := func(_ int, p Partial) {
		var b bytes.Buffer
		if err := EncodePartial(&b, &p); err != nil {
			t.Fatal(err)
		}
		worst = max(worst, (live()-before)/gBytes)
		emitted++
	}
	for b := 0; b < 3; b++ {
		if err := fn.StartBundle(ctx, emit); err != nil {
			t.Fatal(err)
		}
		for _, sh := range plan.Shards[b*4 : (b+1)*4] {
			if err := fn.ProcessElement(ctx, sh, emit); err != nil {
				t.Fatal(err)
			}
		}
		if err := fn.FinishBundle(ctx, emit); err != nil {
			t.Fatal(err)
		}
		after := (live() - before) / gBytes
		t.Logf("bundle %d: at most %.2f G live while emitting, %.2f G after the bundle", b+1, worst, after)
		// bound: the DoFn's G + the shard's pieces = 2 G, plus S,
		// identities and the feature file (small here: 0.25 G of slack)
		if worst > 2.25 || after > 1.25 {
			t.Fatalf("bundle %d: %.2f G live while emitting, %.2f after: more than the bound of 2 G (1 G between shards)", b+1, worst, after)
		}
	}
	if len(plan.Shards) != 12 || emitted != 12*(1+(cfg.M+249)/250) {
		t.Fatalf("%d shards, %d pieces emitted", len(plan.Shards), emitted)
	}
	t.Logf("%d shards, at most %.2f G of statistics live (G = %.1f MB)", len(plan.Shards), worst, gBytes/1e6)
	runtime.KeepAlive(fn)
}

// TestNodeAddsInPlace: a tree node adds its right child's G piece into
// its left child's memory (the sum aliases it, and the add allocates a
// small fraction of a piece), so a node holds two pieces of one block, not
// more.
func TestNodeAddsInPlace(t *testing.T) {
	const m, lo, hi = 400, 100, 300
	mk := func(node int, v float64) Partial {
		g := make([]float64, hi*(hi+1)/2-lo*(lo+1)/2)
		for i := range g {
			g[i] = v
		}
		return Partial{Block: 1, Node: node, M: m, Lo: lo, Hi: hi, G: g, N: 1, IDSum: uint64(v), IDSq: uint64(v * v)}
	}
	left, right := mk(0, 1), mk(1, 2)
	first := &left.G[0]
	in := []Partial{right, left}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	sum, err := AddChildren(sumtree.Node{Level: 1, Index: 0}, 2, in)
	runtime.ReadMemStats(&ms1)
	if err != nil {
		t.Fatal(err)
	}
	if alloc := ms1.TotalAlloc - ms0.TotalAlloc; &sum.G[0] != first || alloc > uint64(8*len(left.G)/10) {
		t.Errorf("adding two G pieces allocated %d bytes (a piece is %d; the sum aliases the left child: %v)", alloc, 8*len(left.G), &sum.G[0] == first)
	}
	if sum.G[0] != 3 || sum.G[len(sum.G)-1] != 3 || sum.N != 2 || sum.Level != 1 || sum.Node != 0 {
		t.Errorf("sum G %v…%v over %d samples at (%d, %d), want 3 over 2 at (1, 0)", sum.G[0], sum.G[len(sum.G)-1], sum.N, sum.Level, sum.Node)
	}
}
