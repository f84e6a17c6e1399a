package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"sync/atomic"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/codec"
	"github.com/flycl/flycl/reject"
)

// FileBackend serves a Fly-CL model kept in a model file: it loads the
// file when opened and saves it atomically (temporary file, fsync,
// rename) after every change, before the change is acknowledged. The
// model is a deploy.Model held by a store.Store, learned, forgotten and
// undone by the store's transactions (store.Store.Learn, Forget, UndoIf),
// the CLI's own. The learner goroutine (the only caller of Learn, Forget
// and Undo) changes it in place through them, with no copy of the m×m
// statistics, and reads it only inside store.Store.View and Hold;
// predictions read the published snapshot, an immutable flycl.Predictor
// (W, C and the class names), which a change replaces only once saved.
// A change that fails after it began to alter the model (a failed solve
// or save) is undone by reading the model back from its file, which holds
// exactly the last acknowledged state.
//
// The backend is the model file's one writer for as long as it is open
// (modelfile.TakeLock): a learn, forget, merge or second server on the
// same file fails with modelfile.ErrLocked until Close. It also notices
// a file replaced or rewritten behind it by something that ignores the
// lock (a copy, a restore from backup): it then refuses every change
// with ErrFileChanged, rather than overwrite the file or read foreign
// contents back, and Health reports it, until the server restarts.
type FileBackend struct {
	path string
	// st is the model file as a durable store: its lock, the model and
	// its pipeline (as the CLI keeps them; nil while it cannot be read
	// back), the journal and checkpoints.
	st       *store.Store
	newModel func() (*flycl.Model, error)
	// declared is the pipeline SetPipeline gave a model that has none
	// (restored with a new model that was never saved).
	declared *modelfile.Pipeline
	// faults are the store's writes replaced by tests (failures
	// injected); nil funcs: the real ones.
	faults *store.Faults
	// cur is the published snapshot: written by Learn and Forget, read
	// by Current from any goroutine.
	cur atomic.Pointer[fileView]
	// policy is FileOptions.LambdaPolicy.
	policy flycl.LambdaPolicy
	// refactor is FileOptions.Refactor.
	refactor bool
	log      *slog.Logger
}

// Checkpoints say when a FileBackend with a journal rewrites its model
// file whole: after Entries changes or Bytes of journal records since
// the last checkpoint, whichever comes first, and at Close. Entries 0
// keeps no journal: every change rewrites the model file (G included)
// before it is acknowledged.
type Checkpoints = store.Checkpoints

// ErrFileChanged is returned (wrapped) for every change refused because
// the model file was replaced or rewritten behind the server.
var ErrFileChanged = store.ErrFileChanged

// ErrNotDurable is wrapped by Health's error after a change that could
// not be saved (it was refused; nothing acknowledged is lost).
var ErrNotDurable = store.ErrNotDurable

// FileOptions say how OpenFileWith opens a model file.
type FileOptions struct {
	// Create makes the empty model when the file does not exist (it is
	// written at the first learn); nil makes a missing file an error.
	Create func() (*flycl.Model, error)
	// Lock says how to take the file's single-writer lock (how long to
	// wait for another writer; how to name this one).
	Lock modelfile.LockOptions
	// LambdaPolicy applies to learns without a λ (flycl.LambdaKeep: keep
	// the model's λ once it has one; default GCV on every learn).
	LambdaPolicy flycl.LambdaPolicy
	// Checkpoints, when Entries > 0, make a change durable by appending it
	// to the model's journal (modelfile.OpenJournal: its features, names
	// and options, synced) instead of rewriting the model file; the file
	// is rewritten as a checkpoint as they say (one that fails, as on a
	// full disk, leaves the changes to the journal and is tried again
	// 30 s later). Loading replays the journal on the checkpoint, so a
	// kill at any moment loses nothing acknowledged; the replay after a
	// crash costs a learn per entry.
	Checkpoints Checkpoints
	// Logger gets a line for every state the backend cannot leave by
	// itself (lock file or journal changed behind it, a change that could
	// not be saved, a failed checkpoint); nil: slog.Default().
	Logger *slog.Logger
	// Refactor makes every learn refactor G + λI instead of updating the
	// factor by the learn's rank-n term (codec.SetUpdateLimit(m, 0)):
	// the path before updates, for benchmarks side by side.
	Refactor bool
}

// OpenFile opens the model file at path. When the file does not exist and
// create is not nil, the model starts empty (version 0) and the file is
// written at the first learn; otherwise a missing file is an error.
//
// The backend holds the file's single-writer lock until Close; another
// writer makes OpenFile fail with a *modelfile.LockedError.
func OpenFile(path string, create func() (*flycl.Model, error)) (*FileBackend, error) {
	return OpenFileWith(context.Background(), path, FileOptions{Create: create, Lock: modelfile.LockOptions{Command: "a flycl server"}})
}

// OpenFileWith opens the model file at path as OpenFile does, with
// options.
func OpenFileWith(ctx context.Context, path string, opt FileOptions) (*FileBackend, error) {
	b := &FileBackend{path: path, newModel: opt.Create, faults: &store.Faults{}, policy: opt.LambdaPolicy, refactor: opt.Refactor, log: opt.Logger}
	if b.log == nil {
		b.log = slog.Default()
	}
	so := &store.Options{Wait: opt.Lock.Wait, Command: opt.Lock.Command, Checkpoints: opt.Checkpoints, Logger: b.log,
		Faults: b.faults,
		Prepare: func(m *deploy.Model) {
			if b.refactor {
				codec.SetUpdateLimit(m.Model, 0)
			}
		},
	}
	if opt.Create != nil {
		so.Create = func() (*deploy.Model, error) {
			m, err := b.newModel()
			if err != nil {
				return nil, err
			}
			deploy.Calibrate(m)
			return &deploy.Model{Model: m, Pipeline: b.declared}, nil
		}
	}
	st, err := store.Open(ctx, path, so)
	if err != nil {
		return nil, err
	}
	if err := st.View(func(m *deploy.Model) error {
		if m == nil {
			return fmt.Errorf("open %s: %w", path, fs.ErrNotExist)
		}
		return nil
	}); err != nil {
		st.Close()
		return nil, err
	}
	for _, w := range st.Warnings {
		b.log.Warn(w, "model", path)
	}
	b.st = st
	b.cur.Store(b.snapshot())
	return b, nil
}

// Checkpoint rewrites the model file whole when its journal holds
// changes, and starts the journal anew. Close calls it.
func (b *FileBackend) Checkpoint() error { return b.st.Checkpoint() }

// Close releases the model file's lock. The backend takes no changes
// after it.
//
// With a journal, Close first writes a checkpoint (a failure leaves the
// journal, which loses nothing).
func (b *FileBackend) Close() error { return b.st.Close() }

// ErrClosed is returned for a change to a closed FileBackend.
var ErrClosed = store.ErrClosed

// Health reports whether the backend can take changes: nil, or why not
// (store.Store.Health): it is closed; its lock file or journal was
// removed or replaced behind it (modelfile.ErrLockLost,
// modelfile.ErrJournalChanged: for good, until a restart); the file on
// disk is not the one it last loaded or saved (ErrFileChanged; a file put
// back as it was, the same file unchanged, is accepted again); or the
// last change could not be made durable (ErrNotDurable: a full disk;
// cleared by the next change that is).
func (b *FileBackend) Health() error { return b.st.Health() }

// Pipeline returns how the model's features are made from an image (nil
// when unknown: a model learned from feature vectors only).
func (b *FileBackend) Pipeline() *modelfile.Pipeline { return b.cur.Load().pipeline }

// SetPipeline declares the backbone that turns images into features. It
// must be the one the model learned with (modelfile.Pipeline.Check); a
// model without a pipeline takes it only while it has learned nothing.
// Call it before serving.
func (b *FileBackend) SetPipeline(p *modelfile.Pipeline) error {
	err := b.st.Hold(func(m *deploy.Model) error {
		switch {
		case m == nil:
			return fmt.Errorf("the model could not be read back from %s after a failed change", b.path)
		case m.Pipeline != nil:
			if err := m.Pipeline.Check(p); err != nil {
				return fmt.Errorf("%s: %w", b.path, err)
			}
		case m.Model.Version() > 0:
			return fmt.Errorf("%s was learned from feature vectors of unknown origin: it cannot take images from %s (serve it without a backbone)", b.path, p.Backbone)
		case p.Dim != m.Model.InputDim():
			return fmt.Errorf("backbone %s gives %d features, the model %s wants d=%d", p.Backbone, p.Dim, b.path, m.Model.InputDim())
		default:
			m.Pipeline, b.declared = p, p
		}
		return nil
	})
	if err != nil {
		return err
	}
	b.cur.Store(b.snapshot())
	return nil
}

// Config returns the model's Fly-CL configuration.
func (b *FileBackend) Config() flycl.Config { return b.cur.Load().config }

// Current returns the latest snapshot.
func (b *FileBackend) Current() ModelView { return b.cur.Load() }

// notRecorded makes the error of a change that is saved but not recorded
// in the journal's history (store.ErrNotRecorded: only its record, for
// undo, is missing) a warning, and returns nil for it.
func (b *FileBackend) notRecorded(err error) error {
	if errors.Is(err, store.ErrNotRecorded) && !errors.Is(err, modelfile.ErrLockLost) {
		b.log.Warn("a change is saved, but not recorded in the journal's history", "model", b.path, "reason", err.Error())
		return nil
	}
	return err
}

// Learn learns the features x (n×d) with their class names: as one task
// (λ by GCV on it, or opt.Lambda), or with opt.Online in mini-batches of
// opt.Batch, as the store's one learn transaction (store.Store.Learn:
// recorded in the journal, durable before it returns), and returns the
// new snapshot. Input the model refuses is an *InputError and changes
// nothing; a learn that fails later is undone (see FileBackend).
func (b *FileBackend) Learn(ctx context.Context, x []float32, names []string, opt deploy.LearnOptions) (LearnReport, ModelView, error) {
	d := b.cur.Load().Dim()
	if len(x) == 0 || len(x)%d != 0 || len(x)/d != len(names) {
		return LearnReport{}, nil, &InputError{fmt.Errorf("%d feature values for %d labels and d=%d", len(x), len(names), d)}
	}
	dopt, err := opt.Check()
	if err != nil {
		return LearnReport{}, nil, &InputError{err}
	}
	dopt.LambdaPolicy = b.policy
	l, err := b.st.Learn(ctx, store.LearnData{X: x, D: d, Names: names, Source: "the request"}, dopt, nil)
	if err = b.notRecorded(err); err != nil {
		return LearnReport{}, nil, asInput(err)
	}
	res := l.LearnResult
	rep := LearnReport{Samples: res.Samples, NewClasses: res.Added, Lambda: res.Lambda, Steps: len(res.Steps), Stages: res.Stages, Save: l.Save, Warnings: res.Warnings}
	sn := b.snapshot()
	b.cur.Store(sn)
	return rep, sn, nil
}

// Forget removes a class. With x (its n×d features) the removal is
// exact: the model equals one that never saw the class. Without, the
// class's column is dropped but G still holds its samples.
func (b *FileBackend) Forget(ctx context.Context, class string, x []float32) (ModelView, error) {
	sn, _, err := b.ForgetExact(ctx, class, x)
	return sn, err
}

// ForgetExact is Forget, exact without the data when the model's journal
// holds every sample the class learned (store.JournalSamples), as
// flycl forget is. It returns the samples subtracted (0: only the
// column was dropped).
func (b *FileBackend) ForgetExact(ctx context.Context, class string, x []float32) (ModelView, int, error) {
	if !slices.Contains(b.cur.Load().pred.Classes().Names(), class) {
		return nil, 0, fmt.Errorf("%w %q", ErrUnknownClass, class)
	}
	if len(x) == 0 {
		x = nil // no data: from the journal, or drop the column
	}
	var data func(*deploy.Model) (*store.ForgetData, error)
	if x != nil {
		d := b.cur.Load().Dim()
		if len(x)%d != 0 {
			return nil, 0, &InputError{fmt.Errorf("%d feature values are not a multiple of d=%d", len(x), d)}
		}
		names := make([]string, len(x)/d)
		for i := range names {
			names[i] = class
		}
		data = func(*deploy.Model) (*store.ForgetData, error) {
			return &store.ForgetData{X: x, D: d, Names: names, Source: "the request"}, nil
		}
	}
	res, err := b.st.Forget(ctx, class, data)
	if err = b.notRecorded(err); err != nil {
		return nil, 0, asInput(err)
	}
	n := 0
	if res.Exact {
		n = res.Record.Samples
	}
	sn := b.snapshot()
	b.cur.Store(sn)
	return sn, n, nil
}

// snapshot makes the published snapshot of the model as it is now.
func (b *FileBackend) snapshot() *fileView {
	v := b.cur.Load() // while the model cannot be read back: the last one
	b.st.View(func(m *deploy.Model) error {
		if m != nil {
			v = viewOf(m, b.path)
		}
		return nil
	})
	return v
}

// fileView is a published model (a ModelView): an immutable flycl.Predictor.
type fileView struct {
	pred *flycl.Predictor
	info Info
	// typ is the rejection's pool in a person's units (typOK: there is one)
	typ   reject.Typical
	typOK bool
	// config and pipeline are the model's (FileBackend.Config, Pipeline)
	config   flycl.Config
	pipeline *modelfile.Pipeline
}

func (s *fileView) Version() uint64 { return s.pred.Version() }
func (s *fileView) Dim() int        { return s.pred.InputDim() }
func (s *fileView) Info() Info {
	i := s.info
	i.Lambdas, i.Config = slices.Clone(i.Lambdas), slices.Clone(i.Config)
	return i
}
func (s *fileView) Classes() []Class {
	names, counts := s.pred.Classes().Names(), s.pred.Classes().Counts()
	out := make([]Class, len(names))
	for i, n := range names {
		out[i] = Class{Name: n, Samples: counts[i]}
	}
	return out
}

// Rank ranks with flycl.Predictor.Rank, as the CLI's predict does.
func (s *fileView) Rank(scores []float32, top int) [][]Score {
	rk := s.pred.Rank(scores, top)
	out := make([][]Score, len(rk))
	for i, row := range rk {
		out[i] = make([]Score, len(row))
		for j, r := range row {
			out[i][j] = Score{Class: r.Name, Score: r.Score}
		}
	}
	return out
}

func (s *fileView) Scores(ctx context.Context, x []float32) ([]float32, error) {
	sc, _, err := s.scores(ctx, x, false)
	return sc, err
}

// ScoresCosines implements CosineScorer. The cosines cost a second
// product of the codes with a classes × m matrix: they are computed only
// when the model's rejection reads them (nil otherwise; a threshold of
// Config.Unknown applies to the model's own score).
func (s *fileView) ScoresCosines(ctx context.Context, x []float32) ([]float32, []float64, error) {
	return s.scores(ctx, x, s.pred.Rejection().Score.NeedsCosine())
}

func (s *fileView) scores(ctx context.Context, x []float32, cosines bool) ([]float32, []float64, error) {
	if s.pred.Classes().Len() == 0 {
		return nil, nil, ErrNotTrained
	}
	if len(x)%s.pred.InputDim() != 0 {
		return nil, nil, &InputError{fmt.Errorf("%d feature values are not a multiple of d=%d", len(x), s.pred.InputDim())}
	}
	var sc []float32
	var cos []float64
	var err error
	if cosines {
		sc, cos, err = s.pred.ScoresCosines(ctx, x)
	} else {
		sc, err = s.pred.Scores(ctx, x)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, err
		}
		return nil, nil, asInput(err)
	}
	return sc, cos, nil
}

// asInput marks err as the request's fault (an *InputError, answered 400)
// when the model says it was caused by the input (flycl.IsInput); a
// numerical or system failure stays as it is (500).
func asInput(err error) error {
	if flycl.IsInput(err) {
		return &InputError{err}
	}
	return err
}

// Undo takes learns back out exactly, as the model's journal records
// them (store.UndoLast), each saved as any change: the last learn (to
// nil), or every learn after version *to, as store.UndoPlan decides. It
// returns the learns taken back, newest first. It is the store's one undo
// loop (store.Store.UndoEach, which flycl undo runs too); every version it
// saves is published at once. An undo the journal cannot do is an
// *InputError.
func (b *FileBackend) Undo(ctx context.Context, u store.Undo) (ModelView, []store.Undone, error) {
	to := u.To
	var done []store.Undone
	_, err := b.st.UndoIf(ctx, u, func(learn, _ *modelfile.JournalEntry) {
		done = append(done, store.UndoneOf(learn))
		b.cur.Store(b.snapshot())
	})
	if errors.Is(err, store.ErrNotRecorded) && !errors.Is(err, modelfile.ErrLockLost) && to == nil && len(done) == 1 {
		// the undo is saved (in a checkpoint); only its record in the
		// history is missing
		b.log.Warn("a change is saved, but not recorded in the journal's history", "model", b.path, "reason", err.Error())
		err = nil
	}
	if err != nil {
		if errors.Is(err, store.ErrNoUndo) {
			err = &InputError{err}
		}
		if len(done) > 0 {
			err = fmt.Errorf("%w (after taking back %d learn(s), newest first: the model is at version %d)", err, len(done), b.cur.Load().Version())
		}
		return nil, done, err
	}
	return b.cur.Load(), done, nil
}

// History lists the changes the model's journal records
// (store.History).
func (b *FileBackend) History() ([]store.HistoryItem, error) { return store.History(b.path) }
