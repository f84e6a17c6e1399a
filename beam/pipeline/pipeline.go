package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"slices"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/backbone"
	"github.com/flycl/flycl/dataset"
	"github.com/flycl/flycl/extract"
	"github.com/flycl/flycl/features"
	"github.com/flycl/flycl/linalg"
	"github.com/flycl/flycl/modelfile"
	"github.com/flycl/flycl/ridge"
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
	Features string
	// Indices selects the samples (positions in the split or feature
	// file) that form the task; nil means all.
	Indices []int

	Config flycl.Config

	ShardSize int // samples per input element (default 64)
	BatchSize int // images per inference call (default 32)
	Threads   int // ONNX Runtime and decoding threads per worker (default 1)
	Workers   int // concurrent extractions per worker process (default: number of CPUs)
	BlockRows int // rows of G per shuffled piece (default 512)

	Out string // the model file written by the final step

	// FailShard >= 0 makes the first attempt at that shard fail (failure
	// injection for tests): the worker creates FailMarker and returns an
	// error; an attempt that finds the marker succeeds.
	FailShard  int
	FailMarker string
}

func (o *Options) defaults() {
	if o.ShardSize <= 0 {
		o.ShardSize = 64
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
}

// Shard is one input element: the samples it names are extracted,
// expanded and added to its bundle's statistics.
type Shard struct {
	ID      int
	Indices []int
}

func init() {
	register.DoFn3x1[context.Context, Shard, func(int, Partial), error](&extractFn{})
	register.Emitter2[int, Partial]()
	register.Function2x2[Partial, Partial, Partial, error](mergePartials)
	register.Function3x0[int, Partial, func(int, Partial)](singleKey)
	register.DoFn3x1[context.Context, int, func(*Partial) bool, error](&finalizeFn{})
	register.Iter1[Partial]()
	beam.RegisterType(reflect.TypeOf((*Shard)(nil)).Elem())
	beam.RegisterCoder(reflect.TypeOf((*Partial)(nil)).Elem(), encodePartial, decodePartial)
}

func encodePartial(p Partial) ([]byte, error) {
	var b bytesBuffer
	err := EncodePartial(&b, &p)
	return b, err
}

func decodePartial(b []byte) (Partial, error) {
	p, err := DecodePartial(b)
	if err != nil {
		return Partial{}, err
	}
	return *p, nil
}

type bytesBuffer []byte

func (b *bytesBuffer) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }

// Plan is what the launcher computes before submitting: the input
// elements and the checksums the final step verifies.
type Plan struct {
	Shards  []Shard
	Dim     int // feature dimension d
	N       int64
	IDSum   uint64
	IDSq    uint64
	Classes []string
}

// MakePlan opens the input (on the launching machine) to size it and
// cut it into shards.
func MakePlan(opt Options) (*Plan, error) {
	opt.defaults()
	var n, dim int
	var classes []string
	switch {
	case opt.Features != "" && opt.Data != "":
		return nil, errors.New("pipeline: give Data or Features, not both")
	case opt.Features != "":
		s, err := features.Load(opt.Features)
		if err != nil {
			return nil, fmt.Errorf("pipeline: %w", err)
		}
		n, dim, classes = s.N, s.D, s.ClassNames
	case opt.Data != "":
		ds, err := dataset.Open(opt.Data, opt.Split)
		if err != nil {
			return nil, fmt.Errorf("pipeline: %w", err)
		}
		bb, err := extract.OpenBackbone(opt.Backbone)
		if err != nil {
			return nil, fmt.Errorf("pipeline: %w", err)
		}
		n, dim, classes = ds.Len(), bb.Dim(), ds.Classes()
	default:
		return nil, errors.New("pipeline: no input (Data or Features)")
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
	ids := make([]int64, len(idx))
	for k, i := range idx {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("pipeline: sample %d outside the input's %d samples", i, n)
		}
		if seen[i] {
			return nil, fmt.Errorf("pipeline: sample %d selected twice", i)
		}
		seen[i] = true
		ids[k] = int64(i)
	}
	p := &Plan{Dim: dim, Classes: classes}
	p.N, p.IDSum, p.IDSq = IDChecksums(ids)
	for lo := 0; lo < len(idx); lo += opt.ShardSize {
		p.Shards = append(p.Shards, Shard{ID: len(p.Shards), Indices: slices.Clone(idx[lo:min(len(idx), lo+opt.ShardSize)])})
	}
	return p, nil
}

// Build adds the pipeline to s: shards -> (reshuffle) -> extract, expand
// and accumulate per bundle -> sum the pieces per block -> one final step
// that verifies, runs GCV, solves and writes the model file.
func Build(s beam.Scope, opt Options, plan *Plan) {
	opt.defaults()
	s = s.Scope("flycl")
	shards := beam.CreateList(s, plan.Shards)
	// Break fusion with Create so the runner can spread the shards over
	// bundles and workers.
	shards = beam.Reshuffle(s, shards)
	pieces := beam.ParDo(s, &extractFn{Opt: opt, Dim: plan.Dim}, shards)
	summed := beam.CombinePerKey(s, mergePartials, pieces)
	final := beam.GroupByKey(s, beam.ParDo(s, singleKey, summed))
	beam.ParDo0(s, &finalizeFn{Opt: opt, Dim: plan.Dim, N: plan.N, IDSum: plan.IDSum, IDSq: plan.IDSq}, final)
}

func mergePartials(a, b Partial) (Partial, error) {
	err := a.Merge(&b)
	return a, err
}

func singleKey(_ int, p Partial, emit func(int, Partial)) { emit(0, p) }

// slots caps the concurrent extractions of this worker process (one
// semaphore per cap): the runner may run more bundles at once than the
// worker has cores, each with its own ONNX Runtime session.
var slots sync.Map // int -> chan struct{}

func slot(n int) chan struct{} {
	c, _ := slots.LoadOrStore(n, make(chan struct{}, n))
	return c.(chan struct{})
}

// extractFn turns shards into per-bundle statistics pieces.
type extractFn struct {
	Opt Options
	Dim int

	data    dataset.Dataset
	feats   *features.Set
	bb      *backbone.Model
	sess    *backbone.Session
	model   *flycl.Model
	acc     *Accumulator
	pending []int
}

func (f *extractFn) Setup(ctx context.Context) error {
	o := f.Opt
	var err error
	if o.Features != "" {
		if f.feats, err = features.Load(o.Features); err != nil {
			return err
		}
	} else {
		if f.data, err = dataset.Open(o.Data, o.Split); err != nil {
			return err
		}
		if f.bb, err = extract.OpenBackbone(o.Backbone); err != nil {
			return err
		}
		if f.sess, err = f.bb.NewSession(o.Threads); err != nil {
			return err
		}
	}
	if f.model, err = flycl.New(o.Config, f.Dim); err != nil {
		return err
	}
	f.acc = NewAccumulator(f.model.Config().M)
	return nil
}

func (f *extractFn) Teardown() error {
	if f.sess != nil {
		return f.sess.Close()
	}
	return nil
}

func (f *extractFn) StartBundle(_ context.Context, _ func(int, Partial)) error {
	f.acc.Reset()
	f.pending = f.pending[:0]
	return nil
}

func (f *extractFn) ProcessElement(ctx context.Context, sh Shard, _ func(int, Partial)) error {
	if sh.ID == f.Opt.FailShard && f.Opt.FailMarker != "" {
		if _, err := os.Stat(f.Opt.FailMarker); errors.Is(err, os.ErrNotExist) {
			if err := os.WriteFile(f.Opt.FailMarker, []byte("failed once\n"), 0o644); err != nil {
				return err
			}
			return fmt.Errorf("injected failure in shard %d", sh.ID)
		}
	}
	f.pending = append(f.pending, sh.Indices...)
	for len(f.pending) >= f.Opt.BatchSize {
		if err := f.batch(ctx, f.pending[:f.Opt.BatchSize]); err != nil {
			return err
		}
		f.pending = f.pending[f.Opt.BatchSize:]
	}
	return nil
}

func (f *extractFn) FinishBundle(ctx context.Context, emit func(int, Partial)) error {
	if len(f.pending) > 0 {
		if err := f.batch(ctx, f.pending); err != nil {
			return err
		}
		f.pending = f.pending[:0]
	}
	for _, p := range f.acc.Pieces(f.Opt.BlockRows) {
		emit(p.Block, *p)
	}
	return nil
}

// batch extracts, expands and accumulates the samples idx.
func (f *extractFn) batch(ctx context.Context, idx []int) error {
	sem := slot(f.Opt.Workers)
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-sem }()
	x, labels, err := f.features(idx)
	if err != nil {
		return err
	}
	h, err := f.model.Expand(ctx, x)
	if err != nil {
		return err
	}
	ids := make([]int64, len(idx))
	for i, v := range idx {
		ids[i] = int64(v)
	}
	return f.acc.Add(h, labels, ids)
}

func (f *extractFn) features(idx []int) ([]float32, []int, error) {
	d := f.Dim
	x := make([]float32, len(idx)*d)
	labels := make([]int, len(idx))
	if f.feats != nil {
		if f.feats.D != d {
			return nil, nil, fmt.Errorf("%s: features have dimension %d, plan says %d", f.Opt.Features, f.feats.D, d)
		}
		for k, i := range idx {
			copy(x[k*d:(k+1)*d], f.feats.Row(i))
			labels[k] = f.feats.Labels[i]
		}
		return x, labels, nil
	}
	per := 3 * f.bb.Size * f.bb.Size
	in := make([]float32, len(idx)*per)
	errs := make([]error, len(idx))
	var wg sync.WaitGroup
	next := make(chan int, len(idx))
	for k := range idx {
		next <- k
	}
	close(next)
	for w := 0; w < f.Opt.Threads; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				img, err := f.data.Image(idx[k])
				if err != nil {
					errs[k] = fmt.Errorf("image %d (%s): %w", idx[k], f.data.Path(idx[k]), err)
					continue
				}
				f.bb.Preset.Tensor(img, in[k*per:(k+1)*per])
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	res, err := f.sess.Run(in, len(idx))
	if err != nil {
		return nil, nil, err
	}
	copy(x, res[0])
	for k, i := range idx {
		labels[k] = f.data.Label(i)
	}
	return x, labels, nil
}

// finalizeFn receives every summed piece, verifies them, runs GCV, solves
// and writes the model file.
type finalizeFn struct {
	Opt   Options
	Dim   int
	N     int64
	IDSum uint64
	IDSq  uint64
}

func (f *finalizeFn) ProcessElement(ctx context.Context, _ int, iter func(*Partial) bool) error {
	var pieces []*Partial
	var p Partial
	for iter(&p) {
		q := p
		pieces = append(pieces, &q)
	}
	m, err := Finish(ctx, f.Opt.Config, f.Dim, pieces, f.Opt.BlockRows, f.N, f.IDSum, f.IDSq)
	if err != nil {
		return err
	}
	return modelfile.Save(f.Opt.Out, m)
}

// Finish assembles the pieces (verifying that every expected sample was
// counted exactly once), chooses λ by GCV on the statistics, solves, and
// returns the model: the same model flycl.Model.LearnTask builds from the
// samples' features in one process.
func Finish(ctx context.Context, cfg flycl.Config, d int, pieces []*Partial, blockRows int, n int64, idSum, idSq uint64) (*flycl.Model, error) {
	base, err := flycl.New(cfg, d)
	if err != nil {
		return nil, err
	}
	cfg = base.Config()
	m := cfg.M
	t, err := Assemble(pieces, m, blockRows, n, idSum, idSq)
	if err != nil {
		return nil, err
	}
	scores, err := t.GCV(ctx, cfg.Lambdas)
	if err != nil {
		return nil, err
	}
	lambda := cfg.Lambdas[ridge.BestLambda(scores)]
	acc, err := ridge.NewAccumulator(m)
	if err != nil {
		return nil, err
	}
	row := make([]float32, m)
	for i := 0; i < m; i++ {
		for j := 0; j <= i; j++ {
			row[j] = float32(t.G[j*m+i])
		}
		if err := acc.SetLowerRow(i, row[:i+1]); err != nil {
			return nil, err
		}
	}
	s32 := make([]float32, len(t.S))
	for i, v := range t.S {
		s32[i] = float32(v)
	}
	if err := acc.SetS(s32, len(t.Classes), int(t.N)); err != nil {
		return nil, err
	}
	used, coef, err := solveRaising(ctx, acc, lambda, cfg.Lambdas)
	if err != nil {
		return nil, err
	}
	rec := flycl.TaskRecord{Samples: int(t.N), NewClasses: slices.Clone(t.Classes), Lambda: used, GCV: scores}
	if used != lambda {
		rec.RaisedFrom = lambda
	}
	st := flycl.State{Config: cfg, InputDim: d, Labels: slices.Clone(t.Classes), History: []flycl.TaskRecord{rec}, Lambda: used, Coef: coef}
	return flycl.Restore(st, base.Projection(), acc)
}

// solveRaising solves with λ, raising it like flycl.Model does when
// G + λI is not numerically positive definite in float32.
func solveRaising(ctx context.Context, acc *ridge.Accumulator, lambda float64, grid []float64) (float64, []float32, error) {
	cands := []float64{lambda}
	for _, l := range slices.Sorted(slices.Values(grid)) {
		if l > lambda {
			cands = append(cands, l)
		}
	}
	for last := cands[len(cands)-1]; len(cands) < 40; {
		last *= 10
		cands = append(cands, last)
	}
	var err error
	for _, l := range cands {
		var coef []float32
		if coef, err = acc.Solve(ctx, l); err == nil {
			return l, coef, nil
		}
		var npd *linalg.NotPositiveDefiniteError
		if !errors.As(err, &npd) {
			return 0, nil, err
		}
	}
	return 0, nil, err
}

// FirstPerClass returns the positions of the first k samples of each class
// of the input of opt (a reproducible subset for tests and measurements).
func FirstPerClass(opt Options, k int) ([]int, error) {
	opt.defaults()
	var labels []int
	if opt.Features != "" {
		s, err := features.Load(opt.Features)
		if err != nil {
			return nil, fmt.Errorf("pipeline: %w", err)
		}
		labels = s.Labels
	} else {
		ds, err := dataset.Open(opt.Data, opt.Split)
		if err != nil {
			return nil, fmt.Errorf("pipeline: %w", err)
		}
		labels = make([]int, ds.Len())
		for i := range labels {
			labels[i] = ds.Label(i)
		}
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
