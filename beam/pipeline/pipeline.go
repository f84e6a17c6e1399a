package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/intake"
	"github.com/flycl/flycl/app/locate"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/sumtree"
	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/backbone/zoo"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/extract"
)

// Options configures one run of the pipeline. It travels to the workers
// inside the DoFns (as JSON), so every path in it must be readable there.
type Options struct {
	// Input: either images (Data, a dataset spec such as
	// "folder:cifar10-jpeg.tar.gz", its Split and a Backbone spec as
	// extract.OpenBackbone takes) or extracted features (Features, an
	// npz file as written by flycl extract).
	Data     string
	Split    string
	Backbone string
	// ModelsDir is where squeezenet and mobilenetv2 without a path find
	// their weights; "": the weights built into flycl (as flycl without a
	// models folder).
	ModelsDir string
	ORTLib    string // the ONNX Runtime library on the workers (for Data)
	Features  string
	// Indices selects the samples (positions in the split or feature
	// file) that form the task; nil means all.
	Indices []int

	Config flycl.Config

	// ShardSize is the number of samples per input element (default
	// DefaultShardSize of the expansion's m). Every shard ships its own G.
	ShardSize int
	// Shards, if > 0, cuts the samples instead into exactly that many
	// contiguous shards, shard i the samples [i·N/Shards, (i+1)·N/Shards)
	// as flycl stats --shard i/Shards takes them.
	Shards    int
	BatchSize int // images per inference call (default 32)
	Threads   int // ONNX Runtime and decoding threads per extraction (default 1)
	Workers   int // concurrent extractions per worker process (default: number of CPUs)
	BlockRows int // rows of G per shuffled piece (default 512)
	// Branches splits the extraction into that many branches (default 1):
	// shard i goes to branch i mod Branches, each branch its own
	// transforms (scope "flycl/branch-<b>"), so that RunOnWorkers can give
	// each branch its own worker process.
	Branches int

	Out      string // the model file written by the final step
	StatsOut string // if set, also the statistics file (for flycl merge)

	// FailShard >= 0 makes the first attempt at that shard fail (failure
	// injection for tests): the worker creates FailMarker and returns an
	// error; an attempt that finds the marker succeeds.
	FailShard  int
	FailMarker string
}

func (o *Options) defaults() {
	if o.ShardSize <= 0 {
		m := o.Config.M
		if m <= 0 {
			m = flycl.DefaultConfig().M
		}
		o.ShardSize = DefaultShardSize(m)
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 32
	}
	if o.Threads <= 0 {
		o.Threads = 1
	}
	if o.Workers <= 0 {
		o.Workers = runtime.NumCPU()
	}
	if o.BlockRows <= 0 {
		o.BlockRows = 512
	}
	if o.Split == "" {
		o.Split = "train"
	}
	if o.Branches <= 0 {
		o.Branches = 1
	}
}

// DefaultShardSize is the shard size used when Options.ShardSize is not
// given: max(64, m²/50000), 2000 samples at m = 10000. Every shard ships
// its G (8·m(m+1)/2 bytes) and about one more through the tree, ≈ 8m²
// bytes: at ~1 GB/s, 4% of the time it takes to extract the shard's
// m²/50000 images at 10 ms each (0.13% at 300 ms, ViT-B/16 on one core),
// whatever m.
func DefaultShardSize(m int) int { return max(64, m*m/50000) }

// Shard is one input element: the samples it names are extracted,
// expanded and added to its bundle's statistics.
type Shard struct {
	ID      int
	Indices []int    // positions in the data set split or feature file
	IDs     []uint64 // their identities (modelfile.SampleID)
}

func init() {
	register.DoFn3x1[context.Context, Shard, func(int, Partial), error](&extractFn{})
	register.Emitter2[int, Partial]()
	register.DoFn4x1[context.Context, int, func(*Partial) bool, func(int, Partial), error](&nodeFn{})
	register.DoFn3x1[context.Context, int, func(*Partial) bool, error](&finalizeFn{})
	register.Iter1[Partial]()
	beam.RegisterType(reflect.TypeOf((*Shard)(nil)).Elem())
	beam.RegisterCoder(reflect.TypeOf((*Partial)(nil)).Elem(), encodePartial, decodePartial)
}

func encodePartial(p Partial) ([]byte, error) {
	defer processStats.encode.since(time.Now())
	var b bytesBuffer
	err := EncodePartial(&b, &p)
	processStats.encodedBytes.Add(int64(len(b)))
	processStats.encodedPieces.Add(1)
	return b, err
}

// WorkerStats is what the pipeline's code did in this process (a worker
// process of a runner, or a process that runs everything): bundles that
// emitted statistics, the samples they summed, and the statistics pieces
// this process encoded for the runner (bytes sent across a process
// boundary on a distributed runner; on prism they are also the pieces the
// final step decodes and re-encodes).
type WorkerStats struct {
	Bundles       int64 `json:"bundles"`
	Samples       int64 `json:"samples"`
	EncodedPieces int64 `json:"encoded_pieces"`
	EncodedBytes  int64 `json:"encoded_bytes"`
	DecodedBytes  int64 `json:"decoded_bytes"` // pieces decoded from the runner
	// Wall time this process spent in each stage, summed over its
	// concurrent bundles (so it may exceed the elapsed time): waiting for
	// an extraction slot, extracting features (decode, preprocess,
	// inference; reading a feature file's rows), expanding and
	// accumulating, cutting the accumulator into pieces at the end of a
	// bundle, encoding and decoding pieces for the runner, adding pieces
	// (the combiner) and the final step (verify, GCV, solve, write).
	Stages StageTimes `json:"stages"`
}

// StageTimes are the wall times of WorkerStats.Stages.
type StageTimes struct {
	SlotWait, Extract, Expand, Pieces, Encode, Decode, Merge, Final time.Duration
}

// String lists the stages with their seconds.
func (t StageTimes) String() string {
	return fmt.Sprintf("slot wait %.2fs, extract %.2fs, expand+accumulate %.2fs, pieces %.2fs, encode %.2fs, decode %.2fs, merge %.2fs, final %.2fs",
		t.SlotWait.Seconds(), t.Extract.Seconds(), t.Expand.Seconds(), t.Pieces.Seconds(), t.Encode.Seconds(), t.Decode.Seconds(), t.Merge.Seconds(), t.Final.Seconds())
}

// stageClock sums the wall time of one stage in this process.
type stageClock struct{ ns atomic.Int64 }

func (c *stageClock) add(d time.Duration) { c.ns.Add(int64(d)) }
func (c *stageClock) since(t time.Time)   { c.add(time.Since(t)) }
func (c *stageClock) load() time.Duration { return time.Duration(c.ns.Load()) }

// processStats counts for ProcessWorkerStats. It is per process by
// nature: a worker process's tally, like a runner's counters, but not
// summed over workers.
var processStats struct {
	bundles, samples, encodedPieces, encodedBytes, decodedBytes atomic.Int64

	slotWait, extract, expand, pieces, encode, decode, merge, final stageClock
}

// ProcessWorkerStats returns this process's WorkerStats so far.
func ProcessWorkerStats() WorkerStats {
	return WorkerStats{Bundles: processStats.bundles.Load(), Samples: processStats.samples.Load(),
		EncodedPieces: processStats.encodedPieces.Load(), EncodedBytes: processStats.encodedBytes.Load(),
		DecodedBytes: processStats.decodedBytes.Load(),
		Stages: StageTimes{SlotWait: processStats.slotWait.load(), Extract: processStats.extract.load(), Expand: processStats.expand.load(),
			Pieces: processStats.pieces.load(), Encode: processStats.encode.load(), Decode: processStats.decode.load(),
			Merge: processStats.merge.load(), Final: processStats.final.load()}}
}

func decodePartial(b []byte) (Partial, error) {
	defer processStats.decode.since(time.Now())
	processStats.decodedBytes.Add(int64(len(b)))
	p, err := DecodePartial(b)
	if err != nil {
		return Partial{}, err
	}
	return *p, nil
}

type bytesBuffer []byte

func (b *bytesBuffer) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }

// Plan is what the launcher computes before submitting: the input
// elements, the checksums the final step verifies, and what the model
// file records about the input.
type Plan struct {
	Shards   []Shard
	Dim      int // feature dimension d
	N        int64
	IDSum    uint64
	IDSq     uint64
	Names    []string            // class names by label (nil: decimal labels)
	Pipeline *modelfile.Pipeline // backbone and transform (for features: what the file records, nil when nothing)
	Source   string              // what the samples come from
}

// MakePlan opens the input (on the launching machine) to size it, name
// its samples and cut it into shards. Sample identities are those of
// flycl stats (modelfile.SampleID of intake.PathKey or intake.RowKey), so
// the statistics the pipeline writes merge with shards made by flycl stats.
// A local model file (Options.Out) that exists is refused here, before
// any work: the pipeline writes a new one and replaces none.
func MakePlan(opt Options) (*Plan, error) {
	opt.defaults()
	if err := checkNewModel(opt.Out); err != nil {
		return nil, err
	}
	in, done, err := openInput(opt)
	if err != nil {
		return nil, err
	}
	defer done()
	n := in.Len()
	p := &Plan{Names: in.Classes(), Source: in.Source}
	if in.Images() {
		e, removeBackbone, err := OpenExtractor(context.Background(), opt)
		if err != nil {
			return nil, err
		}
		defer removeBackbone()
		p.Dim, p.Pipeline = e.Dim(), e.Pipeline()
	} else {
		p.Dim, p.Pipeline = in.Set.D, in.Pipeline
	}
	idx := opt.Indices
	if idx == nil {
		idx = make([]int, n)
		for i := range idx {
			idx[i] = i
		}
	}
	if len(idx) == 0 {
		return nil, errors.New("pipeline: no samples selected")
	}
	seen := make(map[int]bool, len(idx))
	ids := make([]uint64, len(idx))
	for k, i := range idx {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("pipeline: sample %d outside the input's %d samples", i, n)
		}
		if seen[i] {
			return nil, fmt.Errorf("pipeline: sample %d selected twice", i)
		}
		seen[i] = true
		ids[k] = modelfile.SampleID(in.Key(i))
	}
	p.N, p.IDSum, p.IDSq = IDChecksums(ids)
	add := func(lo, hi int) {
		p.Shards = append(p.Shards, Shard{ID: len(p.Shards), Indices: slices.Clone(idx[lo:hi]), IDs: slices.Clone(ids[lo:hi])})
	}
	if opt.Shards > 0 {
		if opt.Shards > len(idx) {
			return nil, fmt.Errorf("pipeline: %d shards of %d samples", opt.Shards, len(idx))
		}
		for i := range opt.Shards {
			add(i*len(idx)/opt.Shards, (i+1)*len(idx)/opt.Shards)
		}
		return p, nil
	}
	for lo := 0; lo < len(idx); lo += opt.ShardSize {
		add(lo, min(len(idx), lo+opt.ShardSize))
	}
	return p, nil
}

// OpenExtractor opens the extractor of opt's images, the one the launcher
// plans with (its dimension and the pipeline the model file records) and
// every worker extracts with: the backbone Backbone (weights on a Beam
// file system staged first; squeezenet and mobilenetv2 without a path
// read ModelsDir, else the weights built into flycl), its "features"
// output and its own transform, the decoder's default pixel limit,
// BatchSize images per inference call and Threads ONNX Runtime and
// decoding threads. It compiles nothing (Extractor.Open does); done
// removes the staged weights.
func OpenExtractor(ctx context.Context, opt Options) (e *extract.Extractor, done func(), err error) {
	opt.defaults()
	spec, remove, err := localBackbone(ctx, opt.Backbone)
	if err != nil {
		return nil, nil, err
	}
	var bb *backbone.Model
	if opt.ModelsDir != "" {
		bb, err = extract.OpenBackbone(spec, opt.ModelsDir)
	} else {
		bb, err = extract.OpenBackboneFS(spec, zoo.FS(), locate.BuiltinWeights)
	}
	if err == nil {
		e, err = extract.NewExtractor(bb, opt.Backbone, "", nil)
	}
	if err != nil {
		remove()
		return nil, nil, fmt.Errorf("pipeline: %w", err)
	}
	e.BatchSize, e.Threads, e.Workers = opt.BatchSize, opt.Threads, opt.Threads
	return e, remove, nil
}

// openInput opens the input of opt (intake.OpenInput, as flycl stats
// does): its size, class names, sample keys and, for features, the
// pipeline the file records.
// A data set on a Beam file system is staged (localData) until done is
// called.
func openInput(opt Options) (in *intake.Input, done func(), err error) {
	feats, remove, err := localCopy(context.Background(), opt.Features)
	if err != nil {
		return nil, nil, err
	}
	defer remove()
	o := intake.InputOptions{Features: feats, Split: opt.Split}
	done = func() {}
	switch {
	case opt.Features != "" && opt.Data != "":
		return nil, nil, errors.New("pipeline: give Data or Features, not both")
	case opt.Data != "":
		data, removeData, err := localData(context.Background(), opt.Data)
		if err != nil {
			return nil, nil, err
		}
		spec, err := dataset.ParseSpec(data)
		if err != nil {
			removeData()
			return nil, nil, fmt.Errorf("pipeline: %w", err)
		}
		o.Data, done = spec, removeData
	case opt.Features == "":
		return nil, nil, errors.New("pipeline: no input (Data or Features)")
	}
	in, err = intake.OpenInput(o)
	if err != nil {
		done()
		return nil, nil, fmt.Errorf("pipeline: %w", err)
	}
	return in, done, nil
}

// Build adds the pipeline to s: shards -> (reshuffle) -> extract, expand
// and accumulate per shard -> add the shards' pieces per block in the
// fixed binary tree over the shards (one GroupByKey per level, two
// children per key) -> one final step that verifies, runs GCV, solves and
// writes the model file.
func Build(s beam.Scope, opt Options, plan *Plan) {
	opt.defaults()
	s = s.Scope("flycl")
	branches := make([][]Shard, min(opt.Branches, max(len(plan.Shards), 1)))
	for i, sh := range plan.Shards {
		branches[i%len(branches)] = append(branches[i%len(branches)], sh)
	}
	var all []beam.PCollection
	for b, shards := range branches {
		bs := s.Scope(BranchScope(b))
		col := beam.CreateList(bs, shards)
		// Break fusion with Create so the runner can spread the shards over
		// bundles and workers.
		col = beam.Reshuffle(bs, col)
		all = append(all, beam.ParDo(bs, &extractFn{Opt: opt, Dim: plan.Dim, Leaves: len(plan.Shards)}, col))
	}
	pieces := all[0]
	if len(all) > 1 {
		pieces = beam.Flatten(s, all...)
	}
	for l := 1; l <= sumtree.Levels(len(plan.Shards)); l++ {
		ts := s.Scope(fmt.Sprintf("tree-%d", l))
		pieces = beam.ParDo(ts, &nodeFn{Level: l, Leaves: len(plan.Shards)}, beam.GroupByKey(ts, pieces))
	}
	final := beam.GroupByKey(s, pieces)
	beam.ParDo0(s, &finalizeFn{Opt: opt, Plan: Plan{Dim: plan.Dim, N: plan.N, IDSum: plan.IDSum, IDSq: plan.IDSq,
		Names: plan.Names, Pipeline: plan.Pipeline, Source: plan.Source}}, final)
}

// BranchScope is the name of the scope of extraction branch b (Options.Branches).
func BranchScope(b int) string { return fmt.Sprintf("branch-%d", b) }

// treeKey is the key a piece at node v of the tree of leaves shards is
// grouped by next: its parent and its block, or finalKey at the root.
func treeKey(v sumtree.Node, block, leaves int) (int, error) {
	if v == sumtree.Root(leaves) {
		return finalKey, nil
	}
	if block+1 >= 1<<blockBits || block < SBlock {
		return 0, fmt.Errorf("statistics tree: block %d (at most %d blocks of G: use larger BlockRows)", block, 1<<blockBits-2)
	}
	return v.Parent().Index<<blockBits | (block + 1), nil
}

const (
	blockBits = 24
	finalKey  = 0
)

// nodeFn adds the pieces of one block of the children of one node at
// Level of the tree (AddChildren) and passes the sum on to its parent's
// key: two pieces of one block in memory at a time.
type nodeFn struct {
	Level  int
	Leaves int
}

func (f *nodeFn) ProcessElement(_ context.Context, key int, iter func(*Partial) bool, emit func(int, Partial)) error {
	defer processStats.merge.since(time.Now())
	var in []Partial
	var p Partial
	for iter(&p) {
		if len(in) == 2 {
			return fmt.Errorf("statistics tree: more than two pieces at level %d key %x (a piece delivered twice)", f.Level, key)
		}
		in = append(in, p)
	}
	if len(in) == 0 {
		return nil
	}
	v := sumtree.Node{Level: f.Level, Index: key >> blockBits}
	sum, err := AddChildren(v, f.Leaves, in)
	if err != nil {
		return err
	}
	k, err := treeKey(v, sum.Block, f.Leaves)
	if err != nil {
		return err
	}
	emit(k, sum)
	return nil
}

// Metrics of the workers (Beam counters, summed over workers by the
// runner): images processed and the milliseconds spent extracting
// (decode, preprocess, inference), expanding and accumulating, emitting
// the statistics pieces, and in the final step.
var (
	imagesCounter     = beam.NewCounter("flycl", "images")
	extractMsCounter  = beam.NewCounter("flycl", "extract_ms")
	expandMsCounter   = beam.NewCounter("flycl", "expand_accumulate_ms")
	emitMsCounter     = beam.NewCounter("flycl", "emit_ms")
	finalMsCounter    = beam.NewCounter("flycl", "final_ms")
	bundlesCounter    = beam.NewCounter("flycl", "bundles")
	extractWaitMsCntr = beam.NewCounter("flycl", "slot_wait_ms")
)

// slots caps the concurrent extractions of this worker process (one
// semaphore per cap): the runner may run more bundles at once than the
// worker has cores, each with its own ONNX Runtime session.
var slots sync.Map // int -> chan struct{}

func slot(n int) chan struct{} {
	c, _ := slots.LoadOrStore(n, make(chan struct{}, n))
	return c.(chan struct{})
}

// extractFn turns each shard into the pieces of its statistics (leaf
// (0, shard ID) of the tree they are added in).
type extractFn struct {
	Opt Options
	Dim int
	// Leaves is the number of shards of the plan: the leaves of the tree
	// the shards' statistics are added in.
	Leaves int

	data dataset.Dataset
	// removeData removes the data set staged from a Beam file system
	removeData func()
	// removeBackbone removes backbone weights staged likewise
	removeBackbone func()
	feats          *features.Set
	// ext extracts the images (OpenExtractor), its session compiled in
	// Setup and closed in Teardown
	ext *extract.Extractor
	cfg flycl.Config       // Config with flycl's defaults for M, P, K
	w   *projection.Matrix // W, as flycl.New generates it
	acc *Accumulator
	// emitted counts the shards whose statistics this bundle emitted.
	emitted int
}

func (f *extractFn) Setup(ctx context.Context) error {
	o := f.Opt
	var err error
	if o.Features != "" {
		if f.feats, err = loadFeatures(ctx, o.Features); err != nil {
			return err
		}
	} else {
		data, remove, err := localData(ctx, o.Data)
		if err != nil {
			return err
		}
		f.removeData = remove
		spec, err := dataset.ParseSpec(data)
		if err != nil {
			return err
		}
		if f.data, _, err = intake.OpenData(spec, o.Split); err != nil {
			return err
		}
		if f.ext, f.removeBackbone, err = OpenExtractor(ctx, o); err != nil {
			return err
		}
		if f.ext.Dim() != f.Dim {
			return fmt.Errorf("pipeline: backbone %s: features have dimension %d, plan says %d", o.Backbone, f.ext.Dim(), f.Dim)
		}
		if err := backbone.Init(o.ORTLib); err != nil {
			return err
		}
		if err := f.ext.Open(); err != nil {
			return err
		}
	}
	if f.cfg, f.w, err = expansion(o.Config, f.Dim); err != nil {
		return err
	}
	f.acc, err = NewAccumulator(f.cfg.M)
	return err
}

// expansion returns cfg with flycl.New's defaults for the expansion (M,
// P, K) and the W flycl.New generates from it, without a flycl.Model: a
// model holds an m×m float32 buffer for its statistics (as much memory as
// the float64 G the DoFn accumulates) that extraction never uses.
func expansion(cfg flycl.Config, d int) (flycl.Config, *projection.Matrix, error) {
	def := flycl.DefaultConfig()
	if cfg.M == 0 {
		cfg.M = def.M
	}
	if cfg.P == 0 {
		cfg.P = def.P
	}
	if cfg.K == 0 {
		cfg.K = def.K
	}
	if len(cfg.Lambdas) == 0 {
		cfg.Lambdas = def.Lambdas
	}
	if err := cfg.Validate(d); err != nil {
		return cfg, nil, err
	}
	w, err := projection.Generate(cfg.M, d, cfg.P, cfg.Seed)
	return cfg, w, err
}

func (f *extractFn) Teardown() error {
	if f.removeData != nil {
		f.removeData()
	}
	if f.removeBackbone != nil {
		f.removeBackbone()
	}
	if f.ext != nil {
		return f.ext.Close()
	}
	return nil
}

func (f *extractFn) StartBundle(_ context.Context, _ func(int, Partial)) error {
	f.emitted = 0
	return nil
}

func (f *extractFn) ProcessElement(ctx context.Context, sh Shard, emit func(int, Partial)) error {
	if sh.ID == f.Opt.FailShard && f.Opt.FailMarker != "" {
		if _, err := os.Stat(f.Opt.FailMarker); errors.Is(err, os.ErrNotExist) {
			if err := os.WriteFile(f.Opt.FailMarker, []byte("failed once\n"), 0o644); err != nil {
				return err
			}
			return fmt.Errorf("injected failure in shard %d", sh.ID)
		}
	}
	if len(sh.IDs) != len(sh.Indices) {
		return fmt.Errorf("shard %d: %d ids for %d samples", sh.ID, len(sh.IDs), len(sh.Indices))
	}
	leaf := sumtree.Leaf(sh.ID)
	if !leaf.In(f.Leaves) {
		return fmt.Errorf("shard %d of a plan of %d shards", sh.ID, f.Leaves)
	}
	// The shard's statistics alone, from zero, in batches from its first
	// sample: the same bits in any bundle, on any worker.
	f.acc.Reset()
	for lo := 0; lo < len(sh.Indices); lo += f.Opt.BatchSize {
		hi := min(len(sh.Indices), lo+f.Opt.BatchSize)
		if err := f.batch(ctx, sh.Indices[lo:hi], sh.IDs[lo:hi]); err != nil {
			return err
		}
	}
	t := time.Now()
	pieces, err := f.acc.Pieces(f.Opt.BlockRows)
	if err != nil {
		return err
	}
	for _, p := range pieces {
		p.Level, p.Node = leaf.Level, leaf.Index
		k, err := treeKey(leaf, p.Block, f.Leaves)
		if err != nil {
			return err
		}
		emit(k, *p)
	}
	if len(pieces) > 0 {
		f.emitted++
		processStats.samples.Add(int64(f.acc.Samples()))
	}
	emitMsCounter.Inc(ctx, time.Since(t).Milliseconds())
	processStats.pieces.since(t)
	return nil
}

func (f *extractFn) FinishBundle(ctx context.Context, _ func(int, Partial)) error {
	if f.emitted > 0 {
		bundlesCounter.Inc(ctx, 1)
		processStats.bundles.Add(1)
	}
	return nil
}

// batch extracts, expands and accumulates the samples idx (identities ids).
func (f *extractFn) batch(ctx context.Context, idx []int, ids []uint64) error {
	sem := slot(f.Opt.Workers)
	t0 := time.Now()
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-sem }()
	t1 := time.Now()
	extractWaitMsCntr.Inc(ctx, t1.Sub(t0).Milliseconds())
	processStats.slotWait.add(t1.Sub(t0))
	x, labels, err := f.features(ctx, idx)
	if err != nil {
		return err
	}
	t2 := time.Now()
	extractMsCounter.Inc(ctx, t2.Sub(t1).Milliseconds())
	processStats.extract.add(t2.Sub(t1))
	imagesCounter.Inc(ctx, int64(len(idx)))
	defer func() {
		expandMsCounter.Inc(ctx, time.Since(t2).Milliseconds())
		processStats.expand.since(t2)
	}()
	// The codes as flycl.Model.TaskStats (and flycl stats) make them: W
	// applied by the sparse gather, whose arithmetic for a sample involves
	// that sample alone, so a code has the same bits in any bundle.
	cfg, n := f.cfg, len(idx)
	h := make([]float32, n*cfg.M)
	if err := f.w.Apply(ctx, projection.Sparse, x, n, h); err != nil {
		return err
	}
	projection.TopK(h, n, cfg.M, cfg.K, cfg.TopK)
	return f.acc.Add(h, labels, ids)
}

// features returns the features and labels of samples idx: rows of the
// feature file, or images extracted by the extractor.
func (f *extractFn) features(ctx context.Context, idx []int) ([]float32, []int, error) {
	d := f.Dim
	labels := make([]int, len(idx))
	if f.feats != nil {
		x := make([]float32, len(idx)*d)
		if f.feats.D != d {
			return nil, nil, fmt.Errorf("%s: features have dimension %d, plan says %d", f.Opt.Features, f.feats.D, d)
		}
		for k, i := range idx {
			copy(x[k*d:(k+1)*d], f.feats.Row(i))
			labels[k] = f.feats.Labels[i]
		}
		return x, labels, nil
	}
	x, err := f.ext.Subset(ctx, f.data, idx)
	if err != nil {
		return nil, nil, err
	}
	for k, i := range idx {
		labels[k] = f.data.Label(i)
	}
	return x, labels, nil
}

// finalizeFn receives every summed piece, verifies them, learns the task
// from the statistics and writes the model file.
type finalizeFn struct {
	Opt  Options
	Plan Plan // without shards
}

func (f *finalizeFn) ProcessElement(ctx context.Context, _ int, iter func(*Partial) bool) error {
	defer func(t time.Time) {
		finalMsCounter.Inc(ctx, time.Since(t).Milliseconds())
		processStats.final.since(t)
	}(time.Now())
	var pieces []*Partial
	var p Partial
	for iter(&p) {
		q := p
		pieces = append(pieces, &q)
	}
	sf, err := Statistics(f.Opt.Config, &f.Plan, pieces, f.Opt.BlockRows)
	if err != nil {
		return err
	}
	if f.Opt.StatsOut != "" {
		if err := saveStats(ctx, f.Opt.StatsOut, sf); err != nil {
			return err
		}
	}
	if f.Opt.Out == "" {
		return nil
	}
	m, err := Learn(ctx, f.Opt.Config, sf)
	if err != nil {
		return err
	}
	return saveModel(ctx, f.Opt.Out, m, sf)
}

// Statistics assembles the pieces into the statistics file of the task,
// verifying that every sample of the plan was counted exactly once.
func Statistics(cfg flycl.Config, plan *Plan, pieces []*Partial, blockRows int) (*modelfile.StatsFile, error) {
	base, err := flycl.New(cfg, plan.Dim)
	if err != nil {
		return nil, err
	}
	st, ids, err := Assemble(pieces, base.Config().M, blockRows, plan.N, plan.IDSum, plan.IDSq)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(st.Labels))
	for i, l := range st.Labels {
		if l >= 0 && l < len(plan.Names) && plan.Names[l] != "" {
			names[i] = plan.Names[l]
		} else {
			names[i] = strconv.Itoa(l)
		}
	}
	return &modelfile.StatsFile{Config: modelfile.StatsConfigOf(base), Pipeline: plan.Pipeline, Stats: st, Names: names,
		Shards: []modelfile.Shard{{Index: 0, Count: 1, Samples: st.N, Source: plan.Source}}, IDs: ids, Created: time.Now().UTC()}, nil
}

// Learn teaches a new model the task whose statistics are sf, as flycl
// merge does: λ by GCV on the statistics, then the Cholesky solve.
func Learn(ctx context.Context, cfg flycl.Config, sf *modelfile.StatsFile) (*flycl.Model, error) {
	m, err := flycl.New(cfg, sf.Config.InputDim)
	if err != nil {
		return nil, err
	}
	if _, err := modelfile.LearnStats(ctx, m, sf.Pipeline, sf, 0); err != nil {
		return nil, err
	}
	return m, nil
}

// FirstPerClass returns the positions of the first k samples of each class
// of the input of opt (a reproducible subset for tests and measurements).
func FirstPerClass(opt Options, k int) ([]int, error) {
	opt.defaults()
	in, done, err := openInput(opt)
	if err != nil {
		return nil, err
	}
	defer done()
	labels := make([]int, in.Len())
	for i := range labels {
		labels[i] = in.Label(i)
	}
	count := map[int]int{}
	var idx []int
	for i, l := range labels {
		if count[l] < k {
			count[l]++
			idx = append(idx, i)
		}
	}
	return idx, nil
}
