package deploy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/codec"
	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/reject"
)

// Model is a deployable model: the Fly-CL model and how its features are
// made. Its methods are not safe for concurrent use; take a
// Model.Predictor() for concurrent predictions.
type Model struct {
	// Model is the core model, a named field rather than embedded: its
	// methods are reached as m.Model.X, and Model's own (Learn and Forget
	// by class name, with their journal-free checks) never shadow them.
	Model *flycl.Model
	// Pipeline is how images become features; nil for a model that
	// learns from feature vectors given directly.
	Pipeline *modelfile.Pipeline
	// Created is when the model was first saved (zero until then).
	Created time.Time
	// crc and base name the model file last loaded or saved, and its
	// version (CheckpointCRC, CheckpointVersion).
	crc  uint32
	base uint64
	// id names the model across its saves (modelfile.ModelID).
	id modelfile.ModelID
	// Warnings are what Load noticed and ignored (a torn journal tail),
	// for the caller to show.
	Warnings []string
}

// New returns an untrained model for d-dimensional features: W generated
// from cfg.Seed, or w when not nil.
func New(cfg flycl.Config, d int, w *projection.Matrix, p *modelfile.Pipeline) (*Model, error) {
	if p != nil && p.Dim != d {
		return nil, fmt.Errorf("deploy: the backbone gives %d-dimensional features, the model is for d=%d", p.Dim, d)
	}
	var m *flycl.Model
	var err error
	if w != nil {
		if w.D != d {
			return nil, fmt.Errorf("deploy: W is %d×%d, the features have d=%d", w.M, w.D, d)
		}
		m, err = flycl.NewWithProjection(cfg, w)
	} else {
		m, err = flycl.New(cfg, d)
	}
	if err != nil {
		return nil, err
	}
	Calibrate(m)
	return &Model{Model: m, Pipeline: p}, nil
}

// OfFile returns the model of a model file loaded for learning
// (modelfile.LoadForLearning gives f and m), keeping f's pipeline,
// creation time, CRC and ID: the checkpoint its journal continues. The
// store loads a model so (store.Load), and replays the journal on it.
func OfFile(f *modelfile.File, m *flycl.Model) *Model {
	return &Model{Model: m, Pipeline: f.Pipeline, Created: f.Created, crc: f.CRC, base: m.Version(), id: f.ID}
}

// CheckpointCRC returns the CRC-32C of the model file this model was last
// loaded from or saved to (modelfile.File.CRC): the checkpoint a journal
// continues.
func (m *Model) CheckpointCRC() uint32 { return m.crc }

// Checkpoint returns the model file this model was last loaded from or
// saved to, as the checkpoint its journal continues.
func (m *Model) Checkpoint() modelfile.Checkpoint {
	return modelfile.Checkpoint{Version: m.base, CRC: m.crc, ID: m.id}
}

// ID returns the model's ID (zero until it was first saved, or when read
// from a file written before IDs).
func (m *Model) ID() modelfile.ModelID { return m.id }

// CheckpointVersion returns the version of the model file this model was
// last loaded from (before its journal's changes) or saved to.
func (m *Model) CheckpointVersion() uint64 { return m.base }

// FileView returns the model as the modelfile.File its save writes
// (store.Store: the one writer of model files), reading the statistics in
// place (codec.View), with no copy of G: valid until the model changes.
func (m *Model) FileView() *modelfile.File {
	return &modelfile.File{Snapshot: codec.View(m.Model), Pipeline: m.Pipeline, Created: m.Created, ID: m.id}
}

// Saved records that f, the model's FileView, was saved (modelfile.Save
// set its creation time, CRC and ID): the model's checkpoint is now that
// file, at the model's version.
func (m *Model) Saved(f *modelfile.File) {
	m.Created, m.crc, m.base, m.id = f.Created, f.CRC, m.Model.Version(), f.ID
}

// File returns the model as a modelfile.File (for Encode).
func (m *Model) File() *modelfile.File {
	return &modelfile.File{Snapshot: m.Model.Snapshot(), Pipeline: m.Pipeline, Created: m.Created, ID: m.id}
}

// CheckPipeline reports whether features made by p fit the model: same
// backbone weights, precision (and int8 calibration), output, dimension
// and transform (modelfile.Pipeline.Check). A nil p (features given
// directly) is accepted. A model without a pipeline takes one from its
// first learn (see Learn), and refuses p once it has learned classes
// without one.
func (m *Model) CheckPipeline(p *modelfile.Pipeline) error {
	switch {
	case p == nil && m.Pipeline == nil:
		return nil
	case p == nil:
		return nil // features given directly: their dimension is checked
	case m.Pipeline == nil && m.Model.Classes().Len() > 0:
		return fmt.Errorf("the model learned from feature vectors without a backbone; it cannot tell whether %s makes the same features", p.Backbone)
	case m.Pipeline == nil:
		return nil
	}
	return m.Pipeline.Check(p)
}

// LearnOptions say how to learn.
type LearnOptions struct {
	// Online learns in mini-batches of Batch samples (re-solving after
	// each); otherwise all samples are one task.
	Online bool
	Batch  int
	// Lambda fixes λ (> 0); 0 chooses it by GCV on the task (or on each
	// mini-batch online).
	Lambda float64
	// LambdaPolicy, when Lambda is 0: flycl.LambdaKeep keeps the model's λ
	// once it has one (no refactor of G + λI), flycl.LambdaGCV (the
	// default) runs GCV on every learn.
	LambdaPolicy flycl.LambdaPolicy
	// MaxBytes, when > 0, bounds the memory a learn may need for its task
	// (flycl.Model.LearnBytes of a task, or of one mini-batch online): a
	// learn over it is refused before anything is allocated, with a
	// *flycl.MemoryError. It is the caller's limit, not the learn's: the
	// journal does not record it, and a replay does not apply it.
	MaxBytes int64
}

// DefaultOnlineBatch is the mini-batch size of an online learn that
// gives none (LearnOptions.Check; flycl learn --online's default).
const DefaultOnlineBatch = 1000

// Check validates options as a request gives them and returns them with
// the default filled in: λ not negative, finite and at most float32's
// largest (0: GCV); Batch not negative and given only with Online; Online
// without a Batch learns in batches of DefaultOnlineBatch. The server
// checks its requests so; Learn itself accepts a Batch without Online
// (it ignores it: journals of flycl learn record its flag's default).
func (o LearnOptions) Check() (LearnOptions, error) {
	switch {
	case !(o.Lambda >= 0) || o.Lambda > math.MaxFloat32:
		return o, fmt.Errorf("deploy: lambda must be positive and finite, at most %g (or absent for GCV), got %g", math.MaxFloat32, o.Lambda)
	case o.Batch < 0:
		return o, fmt.Errorf("deploy: batch must be positive, got %d", o.Batch)
	case o.Batch > 0 && !o.Online:
		return o, fmt.Errorf("deploy: batch applies to online learning only (give online: true)")
	case o.Online && o.Batch == 0:
		o.Batch = DefaultOnlineBatch
	}
	return o, nil
}

// LearnResult reports a learn.
type LearnResult struct {
	Added   []string           // names of the classes new to the model
	Known   []string           // names of the classes it knew already
	Samples int                // samples learned
	Steps   []flycl.TaskRecord // one per task or mini-batch
	Stages  flycl.Stages       // summed over the steps
	Lambda  float64            // λ of the final classifier
	// LambdaRequested is the fixed λ asked for (LearnOptions.Lambda); 0
	// when GCV chose it.
	LambdaRequested float64
	// Warnings are what the caller should tell the user even though the
	// learn succeeded: a λ (requested, or chosen by GCV) that had to be
	// raised for G + λI to factor in float32 (LambdaWarnings).
	Warnings []string
	// Rejection is the model's rejection after the learn (calibrated on
	// its samples: see Calibrate).
	Rejection reject.Rule
}

// LambdaWarnings describes the steps of a learn whose λ was raised for
// G + λI to factor (flycl.TaskRecord.RaisedFrom): nil when none was, else
// one sentence naming the λ requested (requested > 0) or chosen by GCV and
// the λ used.
func LambdaWarnings(steps []flycl.TaskRecord, requested float64) []string {
	var raised []flycl.TaskRecord
	for _, r := range steps {
		if r.RaisedFrom != 0 {
			raised = append(raised, r)
		}
	}
	if len(raised) == 0 {
		return nil
	}
	why := "G + λI cannot be factored in float32 with a smaller λ"
	if len(steps) == 1 {
		r := raised[0]
		if requested > 0 {
			return []string{fmt.Sprintf("λ %g was requested, %g was used: %s", r.RaisedFrom, r.Lambda, why)}
		}
		return []string{fmt.Sprintf("λ %g chosen by GCV was raised to %g: %s", r.RaisedFrom, r.Lambda, why)}
	}
	lo, hi := raised[0].Lambda, raised[0].Lambda
	for _, r := range raised {
		lo, hi = min(lo, r.Lambda), max(hi, r.Lambda)
	}
	used := fmt.Sprintf("%g", lo)
	if hi != lo {
		used = fmt.Sprintf("%g to %g", lo, hi)
	}
	if requested > 0 {
		return []string{fmt.Sprintf("λ %g was requested, %s was used in %d of %d mini-batches: %s", requested, used, len(raised), len(steps), why)}
	}
	return []string{fmt.Sprintf("λ chosen by GCV was raised (to %s) in %d of %d mini-batches: %s", used, len(raised), len(steps), why)}
}

// EdgeWarnings describes the steps of a learn whose λ chosen by GCV is at
// an edge of the grid it scored, widened or not (flycl.TaskRecord.LambdaIssue
// low-edge or high-edge): the best λ may lie beyond it, and GCV's choice is
// then a bound rather than an optimum. nil when there is none.
func EdgeWarnings(steps []flycl.TaskRecord) []string {
	var edge []flycl.TaskRecord
	for _, r := range steps {
		if i := r.LambdaIssue(); i == flycl.LambdaLowEdge || i == flycl.LambdaHighEdge {
			edge = append(edge, r)
		}
	}
	if len(edge) == 0 {
		return nil
	}
	r := edge[0]
	side, beyond := "smallest", "below"
	if r.LambdaIssue() == flycl.LambdaHighEdge {
		side, beyond = "largest", "above"
	}
	chosen := r.Lambda
	if r.RaisedFrom != 0 {
		chosen = r.RaisedFrom
	}
	lo, hi := slices.Min(r.Grid), slices.Max(r.Grid)
	if len(steps) == 1 {
		return []string{fmt.Sprintf("λ %g chosen by GCV is the %s value of the grid it scored (%g to %g): the best λ may lie %s it (give --lambda, or --lambdas with a wider grid)", chosen, side, lo, hi, beyond)}
	}
	return []string{fmt.Sprintf("λ chosen by GCV is at an edge of the grid it scored in %d of %d mini-batches (the first: %g, the %s of %g to %g): the best λ may lie beyond it", len(edge), len(steps), chosen, side, lo, hi)}
}

// CheckLearn reports the error Learn would refuse its input with (a
// wrong dimension or pipeline, a bad class name, batch size or λ, a
// task over opt.MaxBytes), without changing the model: a nil result means Learn gets past its
// checks, so a caller that restores the model after a failed Learn need
// not do so for refused input.
func (m *Model) CheckLearn(x []float32, names []string, p *modelfile.Pipeline, opt LearnOptions) error {
	d := m.Model.InputDim()
	if len(names) == 0 {
		return flycl.Input(errors.New("deploy: no samples to learn"))
	}
	if len(x) != len(names)*d {
		return flycl.Input(fmt.Errorf("deploy: %d values for %d samples of the model's dimension d=%d (features of another dimension?)", len(x), len(names), d))
	}
	if err := m.CheckPipeline(p); err != nil {
		return err
	}
	if opt.Online && opt.Batch <= 0 {
		return fmt.Errorf("deploy: online batch size must be positive, got %d", opt.Batch)
	}
	if !(opt.Lambda >= 0) || opt.Lambda > math.MaxFloat32 {
		return fmt.Errorf("deploy: lambda must be positive and at most %g, float32's largest (or 0 for GCV), got %g", math.MaxFloat32, opt.Lambda)
	}
	seen, fresh := map[string]bool{}, 0
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		if _, ok := m.Model.Classes().LabelOf(n); !ok {
			if err := flycl.CheckClassName(n); err != nil {
				return err
			}
			fresh++
		}
	}
	step := len(names)
	if opt.Online && opt.Batch > 0 {
		step = min(step, opt.Batch)
	}
	return m.Model.CheckLearnBytes(step, fresh, opt.MaxBytes)
}

// Learn adds n×d features x whose classes are names (one per sample).
// The classes are one task (λ by GCV on it, as in the paper), or with
// opt.Online a sequence of mini-batches. Samples of classes the model
// knows already add to their statistics. p is the pipeline the features
// came from (nil when they were given directly); a model without one
// adopts it. The model is unchanged when the input is refused (wrong
// dimension or pipeline, bad names, a bad λ) and when a single task
// fails to learn (flycl takes a failed step back out; the names given to
// new classes stay attached to their unused labels); with opt.Online a
// failure leaves the batches before it learned (and G differs from the
// model before in float32 rounding after a failed solve), and the error
// is a *PartialLearnError saying how many samples were learned, so a
// caller that must undo a failed learn restores the model from its file
// (as the store does), learns on a Clone, or takes those samples back
// out (store.UndoLast).
func (m *Model) Learn(ctx context.Context, x []float32, names []string, p *modelfile.Pipeline, opt LearnOptions) (*LearnResult, error) {
	if err := m.CheckLearn(x, names, p, opt); err != nil {
		return nil, err
	}
	d := m.Model.InputDim()
	res := &LearnResult{Samples: len(names)}
	// Report the names as the model stores them (Unicode NFC for new
	// ones): two forms of one name are one class.
	seen, listed := map[string]bool{}, map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		if l, ok := m.Model.Classes().LabelOf(n); ok {
			if name := m.Model.Classes().Name(l); !listed[name] {
				listed[name] = true
				res.Known = append(res.Known, name)
			}
		} else if v, err := flycl.NormalizeClassName(n); err == nil && !listed[v] {
			listed[v] = true
			res.Added = append(res.Added, v)
		}
	}
	labels, err := m.Model.LabelsFor(names)
	if err != nil {
		return nil, err
	}
	step := len(names)
	if opt.Online {
		step = opt.Batch
	}
	for lo := 0; lo < len(names); lo += step {
		hi := min(len(names), lo+step)
		xb, yb := x[lo*d:hi*d], labels[lo:hi]
		rec, err := m.Model.Learn(ctx, xb, yb, &flycl.LearnOptions{Lambda: opt.Lambda, Policy: opt.LambdaPolicy})
		if err != nil {
			if lo > 0 {
				return nil, &PartialLearnError{Learned: lo, Err: err}
			}
			return nil, err
		}
		res.Steps = append(res.Steps, rec)
		res.Stages.Add(rec.Stages)
	}
	if m.Pipeline == nil && p != nil {
		m.Pipeline = p
	}
	res.Lambda, res.LambdaRequested = m.Model.Lambda(), opt.Lambda
	res.Rejection = m.Model.Rejection()
	res.Warnings = append(LambdaWarnings(res.Steps, opt.Lambda), EdgeWarnings(res.Steps)...)
	return res, nil
}

// PartialLearnError is the error of an online learn (LearnOptions.Online)
// whose mini-batch failed after others were learned: the first Learned
// samples are in the model, as a learn of them alone would have left it.
// Its message is Err's; errors.Is and errors.As see Err.
type PartialLearnError struct {
	Learned int
	Err     error
}

func (e *PartialLearnError) Error() string { return e.Err.Error() }

func (e *PartialLearnError) Unwrap() error { return e.Err }

// Forget removes the class called name. With its data (the n×d features
// of the samples it learned) the removal is exact (flycl.Model.Forget);
// with x nil only its column goes and G keeps its samples
// (flycl.Model.Forget with x nil). exact reports which.
func (m *Model) Forget(ctx context.Context, name string, x []float32, p *modelfile.Pipeline) (rec flycl.TaskRecord, exact bool, err error) {
	label, ok := m.Model.Classes().LabelOf(name)
	if !ok {
		return rec, false, fmt.Errorf("deploy: %w %q (the model has %v)", flycl.ErrUnknownClass, name, m.Model.Classes().Names())
	}
	if x == nil {
		rec, err = m.Model.Forget(ctx, label, nil)
		return rec, false, err
	}
	if err := m.CheckPipeline(p); err != nil {
		return rec, false, err
	}
	rec, err = m.Model.Forget(ctx, label, x)
	return rec, err == nil, err
}

// Select returns the rows of x (n×d) whose names equal name.
func Select(x []float32, d int, names []string, name string) []float32 {
	var out []float32
	for i, n := range names {
		if n == name {
			out = append(out, x[i*d:(i+1)*d]...)
		}
	}
	return out
}

// Distinct returns the distinct names in order of first appearance.
func Distinct(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
