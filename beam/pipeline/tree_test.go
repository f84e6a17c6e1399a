package pipeline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/sumtree"
)

type keyed struct {
	key int
	p   Partial
}

// driveKeyed runs fn over shards as one bundle and returns what it emits
// with its keys.
func driveKeyed(ctx context.Context, fn *extractFn, shards []Shard) ([]keyed, error) {
	var out []keyed
	emit := func(k int, p Partial) { out = append(out, keyed{k, p}) }
	if err := fn.StartBundle(ctx, emit); err != nil {
		return nil, err
	}
	for _, sh := range shards {
		if err := fn.ProcessElement(ctx, sh, emit); err != nil {
			return out, err
		}
	}
	return out, fn.FinishBundle(ctx, emit)
}

// runTree does what the runner does with the tree stages Build adds: at
// each level, group the pieces by key and hand each group to the level's
// nodeFn, the groups in random order and the pieces of each group in
// random order (Beam promises no order), then group everything by the
// final key. It returns the pieces the final step receives.
func runTree(t *testing.T, in []keyed, leaves int, rng *rand.Rand) []*Partial {
	t.Helper()
	ctx := context.Background()
	for l := 1; l <= sumtree.Levels(leaves); l++ {
		groups := map[int][]Partial{}
		for _, kp := range in {
			groups[kp.key] = append(groups[kp.key], kp.p)
		}
		keys := make([]int, 0, len(groups))
		for k := range groups {
			keys = append(keys, k)
		}
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		var out []keyed
		fn := &nodeFn{Level: l, Leaves: leaves}
		for _, k := range keys {
			ps := groups[k]
			rng.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
			i := 0
			iter := func(p *Partial) bool {
				if i == len(ps) {
					return false
				}
				*p = ps[i]
				i++
				return true
			}
			if err := fn.ProcessElement(ctx, k, iter, func(k int, p Partial) { out = append(out, keyed{k, p}) }); err != nil {
				t.Fatalf("level %d key %x: %v", l, k, err)
			}
		}
		in = out
	}
	rng.Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
	var final []*Partial
	for _, kp := range in {
		if kp.key != finalKey {
			t.Fatalf("a piece of block %d at (%d, %d) reaches the final step with key %x", kp.p.Block, kp.p.Level, kp.p.Node, kp.key)
		}
		p := kp.p
		final = append(final, &p)
	}
	return final
}

// shardStatsFiles returns what flycl stats --shard i/K computes for each
// shard of plan (Model.TaskStats of its feature rows, in flycl's chunks),
// as statistics files.
func shardStatsFiles(t *testing.T, cfg flycl.Config, plan *Plan, x []float32, labels []int, d int) []*modelfile.StatsFile {
	t.Helper()
	m, err := flycl.New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	var out []*modelfile.StatsFile
	for _, sh := range plan.Shards {
		xs, ys, keys := make([]float32, 0, len(sh.Indices)*d), make([]int, 0, len(sh.Indices)), make([]string, 0, len(sh.Indices))
		for _, i := range sh.Indices {
			xs = append(xs, x[i*d:(i+1)*d]...)
			ys = append(ys, labels[i])
			keys = append(keys, fmt.Sprintf("row %d", i))
		}
		st, err := m.TaskStats(context.Background(), xs, ys)
		if err != nil {
			t.Fatal(err)
		}
		names := make([]string, len(st.Labels))
		for c, l := range st.Labels {
			names[c] = plan.Names[l]
		}
		f, err := modelfile.NewStatsFile(m, nil, st, names, keys, modelfile.Shard{Index: sh.ID, Count: len(plan.Shards), Source: "test"})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// TestTreeSumIndependentOfWorkersAndOrder: the shards' statistics are
// added in the fixed tree over the shards, so the pipeline's sums do not
// depend on how the runner spreads the shards over workers and bundles,
// nor on the order in which the pieces reach each combine. 21 shards are
// processed by 1, 3 and 7 workers (each its own DoFn instance, one bundle
// of shuffled shards each), their pieces combined as a runner would in
// random arrival orders: every run's statistics are bit-identical, and
// bit-identical to flycl merge (modelfile.MergeStats) of the 21 shards'
// statistics as flycl stats computes them, given in random order; λ, the
// GCV scores, the model's G and S, its coefficients and predictions are
// bit-identical to the model learned from that merge. Adding each block's
// pieces in arrival order instead (the per-block combiner before the tree)
// gives other bits for some order, so the test sees the order.
func TestTreeSumIndependentOfWorkersAndOrder(t *testing.T) {
	path, fs := syntheticFeatures(t, 210)
	cfg := smallConfig()
	// one batch per shard (BatchSize ≥ 10 samples), as flycl stats' one
	// chunk of 256 is: the shard's statistics are the same bits
	opt := Options{Features: path, Config: cfg, Shards: 21, BatchSize: 16, BlockRows: 70, FailShard: -1}
	plan, err := MakePlan(opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.defaults()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))

	files := shardStatsFiles(t, cfg, plan, fs.X, fs.Labels, fs.D)
	rng.Shuffle(len(files), func(i, j int) { files[i], files[j] = files[j], files[i] })
	merged, err := modelfile.MergeStats(files...)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := Learn(ctx, cfg, merged)
	if err != nil {
		t.Fatal(err)
	}

	arrivalDiffers := false
	for _, workers := range []int{1, 3, 7} {
		for trial := 0; trial < 2; trial++ {
			shards := slices.Clone(plan.Shards)
			rng.Shuffle(len(shards), func(i, j int) { shards[i], shards[j] = shards[j], shards[i] })
			var leaves []keyed
			for w := 0; w < workers; w++ {
				fn := &extractFn{Opt: opt, Dim: plan.Dim, Leaves: len(plan.Shards)}
				if err := fn.Setup(ctx); err != nil {
					t.Fatal(err)
				}
				out, err := driveKeyed(ctx, fn, shards[w*len(shards)/workers:(w+1)*len(shards)/workers])
				if err != nil {
					t.Fatal(err)
				}
				leaves = append(leaves, out...)
			}
			rng.Shuffle(len(leaves), func(i, j int) { leaves[i], leaves[j] = leaves[j], leaves[i] })
			what := fmt.Sprintf("%d workers, order %d", workers, trial)

			// the combiner before the tree: each block's pieces added in
			// arrival order
			var arrival []*Partial
			byBlock := map[int]*Partial{}
			for _, kp := range leaves {
				p := kp.p
				p.G, p.S = slices.Clone(p.G), slices.Clone(p.S)
				if a, ok := byBlock[p.Block]; ok {
					if err := a.Merge(&p); err != nil {
						t.Fatal(err)
					}
				} else {
					byBlock[p.Block] = &p
					arrival = append(arrival, &p)
				}
			}
			if old, err := Statistics(cfg, plan, arrival, opt.BlockRows); err != nil {
				t.Fatal(err)
			} else if !slices.Equal(old.Stats.G, merged.Stats.G) {
				arrivalDiffers = true
			}

			sf, err := Statistics(cfg, plan, runTree(t, leaves, len(plan.Shards), rng), opt.BlockRows)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			sameStats(t, what, merged.Stats, sf.Stats)
			if int64(len(sf.IDs)) != plan.N {
				t.Errorf("%s: %d samples, want %d", what, len(sf.IDs), plan.N)
			}
			m, err := Learn(ctx, cfg, sf)
			if err != nil {
				t.Fatal(err)
			}
			diffs, err := DiffModels(ctx, ref, m, fs.X)
			if err != nil {
				t.Fatal(err)
			}
			if len(diffs) > 0 {
				t.Errorf("%s: model differs from flycl merge's: %s", what, strings.Join(diffs, "; "))
			}
		}
	}
	if !arrivalDiffers {
		t.Error("adding the pieces in arrival order gave the tree's bits every time: the data do not test the order")
	}
}

// TestTreeRefusesWrongPieces: a node refuses a piece delivered twice, a
// third piece, a missing sibling and a piece of another block or level,
// each with an error (the final step's checksums catch the rest).
func TestTreeRefusesWrongPieces(t *testing.T) {
	piece := func(block, level, node int) Partial {
		return Partial{Block: block, Level: level, Node: node, M: 4, Lo: 0, Hi: 2, G: []float64{1, 2, 3}, N: 1, IDSum: 1, IDSq: 1}
	}
	parent := sumtree.Node{Level: 1, Index: 1} // of 5 leaves: shards 2 and 3
	for _, c := range []struct {
		name string
		in   []Partial
	}{
		{"no piece", nil},
		{"one of two children", []Partial{piece(0, 0, 2)}},
		{"a child twice", []Partial{piece(0, 0, 2), piece(0, 0, 2)}},
		{"three pieces", []Partial{piece(0, 0, 2), piece(0, 0, 3), piece(0, 0, 3)}},
		{"another block", []Partial{piece(0, 0, 2), piece(1, 0, 3)}},
		{"another level", []Partial{piece(0, 0, 2), piece(0, 1, 3)}},
		{"another node's child", []Partial{piece(0, 0, 2), piece(0, 0, 5)}},
	} {
		if _, err := AddChildren(parent, 5, c.in); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	// a left child alone where the right one covers no shard (shard 4 of
	// 5 at level 1) passes through unchanged
	got, err := AddChildren(sumtree.Node{Level: 1, Index: 2}, 5, []Partial{piece(0, 0, 4)})
	if err != nil || got.Level != 1 || got.Node != 2 || !slices.Equal(got.G, []float64{1, 2, 3}) {
		t.Errorf("lone left child: %+v, %v", got, err)
	}
	// the sum is left + right, whichever comes first
	a, b := piece(0, 0, 2), piece(0, 0, 3)
	b.G, b.IDSum = []float64{10, 20, 30}, 2
	got, err = AddChildren(parent, 5, []Partial{b, a})
	if err != nil || !slices.Equal(got.G, []float64{11, 22, 33}) || got.N != 2 || got.Level != 1 || got.Node != 1 {
		t.Errorf("sum of two children: %+v, %v", got, err)
	}
	// nodeFn: more than two pieces under one key is an error
	fn := &nodeFn{Level: 1, Leaves: 5}
	ps := []Partial{piece(0, 0, 2), piece(0, 0, 3), piece(0, 0, 3)}
	i := 0
	iter := func(p *Partial) bool {
		if i == len(ps) {
			return false
		}
		*p = ps[i]
		i++
		return true
	}
	if err := fn.ProcessElement(context.Background(), 1<<blockBits|1, iter, func(int, Partial) {}); err == nil {
		t.Error("three pieces under one key: no error")
	}
}
