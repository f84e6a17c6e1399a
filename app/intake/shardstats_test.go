package intake_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/intake"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/projection"
)

// TestShardStatsMerge: the statistics of a feature file's shards, merged,
// are those of the whole file (to float64 rounding: the merge sums in
// float64 in a canonical order), and a model NewFromStats makes from them
// has the statistics' expansion whatever the configuration given, and
// learns them into the classifier a learn of the same samples makes (same
// λ, same predictions).
func TestShardStatsMerge(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const n, d = 60, 8
	path := intake.BlobFile(t, dir, "f.npz", 5, n, d, []string{"a", "b", "c"}, nil)
	in, err := intake.OpenInput(intake.InputOptions{Features: path})
	if err != nil {
		t.Fatal(err)
	}
	cfg := flycl.Config{M: 300, P: 4, K: 90, Seed: 11, Lambdas: []float64{1}}
	base, err := deploy.New(cfg, d, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	statsOf := func(count int) *modelfile.StatsFile {
		var parts []*modelfile.StatsFile
		for i := range count {
			s, err := in.Shard(ctx, nil, i, count)
			if err != nil {
				t.Fatal(err)
			}
			f, err := base.ShardStats(ctx, in, s, i, count)
			if err != nil {
				t.Fatal(err)
			}
			parts = append(parts, f)
		}
		merged, err := modelfile.MergeStats(parts...)
		if err != nil {
			t.Fatal(err)
		}
		if err := modelfile.CheckComplete(merged.Shards); err != nil {
			t.Fatalf("%d shards: %v", count, err)
		}
		return merged
	}
	whole, merged := statsOf(1), statsOf(3)
	if !slices.Equal(merged.Names, []string{"a", "b", "c"}) || merged.Stats.N != n {
		t.Fatalf("merged: names %v, %d samples", merged.Names, merged.Stats.N)
	}
	// Each element of G is a sum of n products of float32 values in
	// float64: summing in another grouping changes it by at most about
	// n·ε64 times the sum of the magnitudes, far below 1e-9 relative.
	for i, g := range whole.Stats.G {
		if diff := math.Abs(g - merged.Stats.G[i]); diff > 1e-9*(1+math.Abs(g)) {
			t.Fatalf("G[%d]: whole %g, merged shards %g", i, g, merged.Stats.G[i])
		}
	}

	// Another configuration's expansion is overridden by the statistics'.
	other := flycl.Config{M: 100, P: 2, K: 10, Seed: 99, Lambdas: []float64{1}}
	fromStats, err := deploy.NewFromStats(other, merged, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := fromStats.Model.Config(); c.M != cfg.M || c.P != cfg.P || c.K != cfg.K || c.Seed != cfg.Seed {
		t.Fatalf("model from statistics: m=%d p=%d k=%d seed=%d, want the statistics' %+v", c.M, c.P, c.K, c.Seed, cfg)
	}
	rec, err := fromStats.LearnStatsFile(ctx, merged, 1)
	if err != nil {
		t.Fatal(err)
	}
	learned, _ := deploy.New(cfg, d, nil, nil)
	all, _ := in.Samples(ctx, nil, 0, n)
	names, _ := in.Names(all.Labels)
	res, err := learned.Learn(ctx, all.X, names, nil, deploy.LearnOptions{Lambda: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Lambda != res.Lambda {
		t.Errorf("λ %g from statistics, %g from the learn", rec.Lambda, res.Lambda)
	}
	p1, _ := fromStats.Model.Predictor().Predict(ctx, all.X)
	p2, _ := learned.Model.Predictor().Predict(ctx, all.X)
	if !slices.Equal(p1, p2) || !slices.Equal(fromStats.Model.Classes().Names(), learned.Model.Classes().Names()) {
		t.Errorf("model from statistics predicts %v, the learned one %v", p1, p2)
	}
}

// TestNewFromStatsExplicitW: statistics computed with an explicit W make
// a model only with that W given (deploy.ErrNeedW without it), of their sizes.
func TestNewFromStatsExplicitW(t *testing.T) {
	ctx := context.Background()
	const d = 6
	path := intake.BlobFile(t, t.TempDir(), "f.npz", 7, 12, d, []string{"a", "b"}, nil)
	in, err := intake.OpenInput(intake.InputOptions{Features: path})
	if err != nil {
		t.Fatal(err)
	}
	cfg := flycl.Config{M: 50, P: 3, K: 20, Seed: 1, Lambdas: []float64{1}}
	w, err := projection.Generate(50, d, 3, 42)
	if err != nil {
		t.Fatal(err)
	}
	w.Seed = nil // given, not generated
	m, err := deploy.New(cfg, d, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := in.Samples(ctx, nil, 0, in.Len())
	sf, err := m.ShardStats(ctx, in, s, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := deploy.NewFromStats(cfg, sf, nil); !errors.Is(err, deploy.ErrNeedW) {
		t.Errorf("explicit W not given: %v, want deploy.ErrNeedW", err)
	}
	small, _ := projection.Generate(40, d, 3, 42)
	if _, err := deploy.NewFromStats(cfg, sf, small); err == nil || !strings.Contains(err.Error(), "m=50") {
		t.Errorf("W of another size: %v", err)
	}
	back, err := deploy.NewFromStats(cfg, sf, w)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := back.LearnStatsFile(ctx, sf, 0); err != nil {
		t.Fatal(err)
	}
}
