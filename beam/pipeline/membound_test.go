package pipeline

import (
	"context"
	"runtime"
	"testing"
)

// TestWorkerMemoryBound checks the bound docs/SCALE.md states for one
// worker: an extraction DoFn instance holds one G (its accumulator, reused
// by every bundle) and, while a bundle's statistics are emitted, one more
// (the pieces); the combiner sums each block's pieces into one accumulator
// in place (mergePartials allocates no G), so a worker's live statistics
// are at most 3 G's per DoFn instance whatever the number of bundles: not
// one per bundle. The DoFn is driven over 12 bundles as a runner does,
// each bundle's pieces merged into the accumulators and dropped, and the
// live heap (after a GC) measured after each bundle's emission and after
// its merge.
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
	fn := &extractFn{Opt: opt, Dim: plan.Dim}
	if err := fn.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	acc := map[int]*Partial{}
	var worst float64
	for b, sh := range plan.Shards {
		out, err := driveBundle(ctx, fn, []Shard{sh})
		if err != nil {
			t.Fatal(err)
		}
		emitting := (live() - before) / gBytes
		for _, p := range out {
			if a, ok := acc[p.Block]; ok {
				m, err := mergePartials(*a, p)
				if err != nil {
					t.Fatal(err)
				}
				*a = m
			} else {
				q := p
				acc[p.Block] = &q
			}
		}
		out = nil
		merged := (live() - before) / gBytes
		worst = max(worst, emitting, merged)
		t.Logf("bundle %d: live statistics %.2f G while emitting, %.2f G after merging", b+1, emitting, merged)
		// bound: the DoFn's G + the emitted pieces + the combiner's
		// accumulators = 3 G, plus S, identities and the feature file
		// (small here: 0.25 G of slack)
		if emitting > 3.25 || merged > 3.25 {
			t.Fatalf("bundle %d: %.2f G live while emitting, %.2f after merging: more than the bound of 3 G", b+1, emitting, merged)
		}
	}
	if len(plan.Shards) < 12 {
		t.Fatalf("only %d bundles", len(plan.Shards))
	}
	t.Logf("%d bundles, at most %.2f G of statistics live (G = %.1f MB)", len(plan.Shards), worst, gBytes/1e6)
	runtime.KeepAlive(fn)
}

// TestCombinerAddsInPlace: summing a G piece into the accumulator adds
// into the accumulator's own memory (no allocation, the result aliases
// it), so a combiner holds one G piece per block, not one per input.
func TestCombinerAddsInPlace(t *testing.T) {
	const m, lo, hi = 400, 100, 300
	mk := func(v float64) Partial {
		g := make([]float64, hi*(hi+1)/2-lo*(lo+1)/2)
		for i := range g {
			g[i] = v
		}
		return Partial{Block: 1, M: m, Lo: lo, Hi: hi, G: g, N: 1, IDSum: uint64(v), IDSq: uint64(v * v)}
	}
	acc, in := mk(1), mk(2)
	first := &acc.G[0]
	allocs := testing.AllocsPerRun(20, func() {
		var err error
		if acc, err = mergePartials(acc, in); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 || &acc.G[0] != first {
		t.Errorf("merging a G piece allocated %.0f times per merge (aliases the accumulator: %v)", allocs, &acc.G[0] == first)
	}
	if want := 1 + 2*21.0; acc.G[0] != want || acc.G[len(acc.G)-1] != want || acc.N != 22 {
		t.Errorf("accumulated G %v…%v over %d samples, want %v over 22", acc.G[0], acc.G[len(acc.G)-1], acc.N, want)
	}
}
