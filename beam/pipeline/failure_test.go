package pipeline

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/format/modelfile"
)

// syntheticFeatures writes a feature file of n samples of 4 classes (64
// dimensions, class means apart plus unit noise) and returns its path and
// content.
func syntheticFeatures(t *testing.T, n int) (string, *features.Set) {
	t.Helper()
	const d, classes = 64, 4
	rng := rand.New(rand.NewPCG(1, 2))
	means := make([]float32, classes*d)
	for i := range means {
		means[i] = float32(rng.NormFloat64())
	}
	s := &features.Set{N: n, D: d, X: make([]float32, n*d), Labels: make([]int, n), ClassNames: []string{"a", "b", "c", "d"}}
	for i := 0; i < n; i++ {
		l := i % classes
		s.Labels[i] = l
		for j := 0; j < d; j++ {
			s.X[i*d+j] = max(0, means[l*d+j]+float32(rng.NormFloat64()))
		}
	}
	p := filepath.Join(t.TempDir(), "feats.npz")
	if err := features.Save(p, s); err != nil {
		t.Fatal(err)
	}
	return p, s
}

func smallConfig() flycl.Config {
	return flycl.Config{M: 300, P: 16, K: 60, Seed: 3, Lambdas: []float64{1e-1, 1, 10, 100, 1e3, 1e4}}
}

// TestInjectedFailure makes the first attempt at one shard fail. Prism
// does not retry failed bundles (its README: "Prism doesn't retry failed
// bundles, and simply fails the job instead"), so on prism the job fails
// and writes nothing; it is the rerun, the retry prism leaves to the
// caller, that must give exactly the model of a run without failure. The
// bundle-level retry that Flink, Spark and Dataflow do is tested by
// TestRetriedBundleCountsOnce.
func TestInjectedFailure(t *testing.T) {
	path, fs := syntheticFeatures(t, 400)
	cfg := smallConfig()
	dir := t.TempDir()
	// one batch per shard (BatchSize ≥ ShardSize), as flycl stats sums a
	// shard of 20 samples in one chunk: each shard's statistics are flycl
	// stats' bits
	base := Options{Features: path, Config: cfg, ShardSize: 20, BatchSize: 32, BlockRows: 64, FailShard: -1}

	clean := base
	clean.Out, clean.StatsOut = filepath.Join(dir, "clean.flycl"), filepath.Join(dir, "clean.stats")
	want, err := runPipeline(t, clean)
	if err != nil {
		t.Fatal(err)
	}

	failing := base
	failing.Out, failing.StatsOut = filepath.Join(dir, "retry.flycl"), filepath.Join(dir, "retry.stats")
	failing.FailShard, failing.FailMarker = 7, filepath.Join(dir, "failed-once")
	if _, err := runPipeline(t, failing); err == nil || !strings.Contains(err.Error(), "injected failure in shard 7") {
		t.Fatalf("job with an injected failure: error %v, want the injected failure (prism does not retry bundles)", err)
	}
	if _, err := os.Stat(failing.Out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("failed job left a model file (%v)", err)
	}
	got, err := runPipeline(t, failing) // the marker exists: shard 7 succeeds now
	if err != nil {
		t.Fatal(err)
	}

	// Reference: the single-process learn of the same features.
	ref, err := flycl.New(cfg, fs.D)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ref.Learn(context.Background(), fs.X, fs.Labels, nil); err != nil {
		t.Fatal(err)
	}
	compareModels(t, ref, got, fs.X)
	compareModels(t, want, got, fs.X)

	// The codes are the same bits in any bundle (sparse gather) and the
	// shards are added in the same tree: the two runs' statistics are the
	// same bits.
	a, err := modelfile.LoadStats(clean.StatsOut)
	if err != nil {
		t.Fatal(err)
	}
	b, err := modelfile.LoadStats(failing.StatsOut)
	if err != nil {
		t.Fatal(err)
	}
	sameStats(t, "rerun", a.Stats, b.Stats)
	if !slices.Equal(a.IDs, b.IDs) {
		t.Error("the runs' statistics list different samples")
	}
	// prism's tree stages (20 shards: 5 levels) add the shards as flycl
	// merge adds flycl stats' statistics of the same 20 shards
	plan, err := MakePlan(base)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := modelfile.MergeStats(shardStatsFiles(t, cfg, plan, fs.X, fs.Labels, fs.D)...)
	if err != nil {
		t.Fatal(err)
	}
	sameStats(t, "flycl merge of the shards", merged.Stats, a.Stats)
}

// driveBundle runs fn over shards as one bundle, as a runner does.
func driveBundle(ctx context.Context, fn *extractFn, shards []Shard) ([]Partial, error) {
	var out []Partial
	emit := func(_ int, p Partial) { out = append(out, p) }
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

// TestRetriedBundleCountsOnce drives the extraction DoFn through what a
// runner that retries bundles does: an attempt that fails part-way is
// abandoned, and the retry starts from StartBundle. What the failed
// attempt emitted (the statistics of the shards before the failing one,
// each shard's own) is discarded with it, as Beam discards every output of
// a failed bundle; the retry must emit exactly what one clean attempt
// emits.
func TestRetriedBundleCountsOnce(t *testing.T) {
	path, _ := syntheticFeatures(t, 120)
	opt := Options{Features: path, Config: smallConfig(), ShardSize: 10, BatchSize: 8, BlockRows: 50,
		FailShard: 4, FailMarker: filepath.Join(t.TempDir(), "failed-once")}
	plan, err := MakePlan(opt)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	run := func(fn *extractFn, shards []Shard) ([]Partial, error) {
		var out []Partial
		emit := func(_ int, p Partial) { out = append(out, p) }
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
	opt.defaults()
	retried := &extractFn{Opt: opt, Dim: plan.Dim, Leaves: len(plan.Shards)}
	if err := retried.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := run(retried, plan.Shards)
	if err == nil || !strings.Contains(err.Error(), "injected failure in shard 4") {
		t.Fatalf("first attempt: error %v, want the injected failure", err)
	}
	for _, p := range out {
		if p.Level != 0 || p.Node >= 4 {
			t.Fatalf("failed attempt emitted a piece at (%d, %d): want only the leaves of shards 0-3, before the failure", p.Level, p.Node)
		}
	}
	got, err := run(retried, plan.Shards)
	if err != nil {
		t.Fatal(err)
	}
	once := &extractFn{Opt: opt, Dim: plan.Dim, Leaves: len(plan.Shards)}
	once.Opt.FailShard = -1
	if err := once.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	want, err := run(once, plan.Shards)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("retry emitted %d pieces, a clean attempt %d", len(got), len(want))
	}
	for i := range want {
		var a, b bytes.Buffer
		EncodePartial(&a, &want[i])
		EncodePartial(&b, &got[i])
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("piece %d of the retried bundle differs from a clean attempt's", want[i].Block)
		}
	}
	var n int64
	for _, p := range got {
		if p.Block == SBlock {
			n += p.N
		}
	}
	if n != plan.N {
		t.Errorf("retried bundle counts %d samples, want %d", n, plan.N)
	}
}

// TestDoubleDeliveryDetected: if a runner delivered a bundle's output
// twice, the sums would count samples twice; the pieces' identities and
// checksums make that an error instead of a silently wrong model.
func TestDoubleDeliveryDetected(t *testing.T) {
	acc, err := NewAccumulator(5)
	if err != nil {
		t.Fatal(err)
	}
	h := []float32{1, 0, 2, 0, 0, 0, 3, 0, 0, 1}
	if err := acc.Add(h, []int{0, 1}, []uint64{10, 20}); err != nil {
		t.Fatal(err)
	}
	pieces, err := acc.Pieces(2)
	if err != nil {
		t.Fatal(err)
	}
	s := pieces[0]
	dup := *s
	if err := dup.Merge(s); err == nil || !strings.Contains(err.Error(), "counted twice") {
		t.Errorf("merging a piece with itself: %v, want 'counted twice'", err)
	}
	n, sum, sq := IDChecksums([]uint64{10, 20})
	if _, _, err := Assemble(pieces, 5, 2, n, sum, sq); err != nil {
		t.Fatalf("complete pieces: %v", err)
	}
	g := *pieces[1]
	g.G = slices.Clone(g.G)
	if err := g.Merge(pieces[1]); err != nil {
		t.Fatal(err)
	}
	doubled := append([]*Partial{pieces[0], &g}, pieces[2:]...)
	if _, _, err := Assemble(doubled, 5, 2, n, sum, sq); err == nil || !strings.Contains(err.Error(), "counted twice") {
		t.Errorf("a G piece summed twice: %v, want an error", err)
	}
	if _, _, err := Assemble(pieces[:len(pieces)-1], 5, 2, n, sum, sq); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a G piece missing: %v, want an error", err)
	}
	// The assembled G is the brute-force Σ hᵀh.
	st, _, _ := Assemble(pieces, 5, 2, n, sum, sq)
	for i := 0; i < 5; i++ {
		for j := 0; j <= i; j++ {
			want := float64(h[i])*float64(h[j]) + float64(h[5+i])*float64(h[5+j])
			if got := st.G[i*(i+1)/2+j]; got != want {
				t.Errorf("G[%d][%d] = %g, want %g", i, j, got, want)
			}
		}
	}
}

func TestPartialCoding(t *testing.T) {
	p := &Partial{Block: SBlock, Level: 2, Node: 3, M: 3, Labels: []int{2, 5}, Counts: []int{1, 4}, S: []float64{1, 2, 3, 4, 5, math.Pi},
		IDs: []uint64{1, 1 << 63}, N: 5, IDSum: 7, IDSq: 9}
	var b bytes.Buffer
	if err := EncodePartial(&b, p); err != nil {
		t.Fatal(err)
	}
	q, err := DecodePartial(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var c bytes.Buffer
	EncodePartial(&c, q)
	if !bytes.Equal(b.Bytes(), c.Bytes()) || q.S[5] != math.Pi || q.IDs[1] != 1<<63 || q.Labels[1] != 5 || q.Counts[1] != 4 || q.Level != 2 || q.Node != 3 {
		t.Errorf("round trip: %+v, want %+v", q, p)
	}
	for _, n := range []int{0, 5, len(b.Bytes()) - 1} {
		if _, err := DecodePartial(b.Bytes()[:n]); err == nil {
			t.Errorf("decoding %d of %d bytes: no error", n, b.Len())
		}
	}
}

// FuzzDecodePartial: arbitrary bytes give a piece or an error, never a
// panic or an allocation larger than the input.
func FuzzDecodePartial(f *testing.F) {
	var b bytes.Buffer
	EncodePartial(&b, &Partial{Block: 0, M: 2, Lo: 0, Hi: 2, G: []float64{1, 2, 3}, N: 1, IDSum: 1, IDSq: 1})
	f.Add(b.Bytes())
	b.Reset()
	EncodePartial(&b, &Partial{Block: SBlock, M: 1, Labels: []int{0}, Counts: []int{1}, S: []float64{1}, IDs: []uint64{3}, N: 1})
	f.Add(b.Bytes())
	f.Add([]byte(partialMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodePartial(data)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := EncodePartial(&out, p); err != nil || !bytes.Equal(out.Bytes(), data) {
			t.Fatalf("decoded piece does not re-encode to its input")
		}
	})
}
