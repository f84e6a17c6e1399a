package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/deploy"
	"github.com/flycl/flycl/modelfile"
)

// FileBackend serves a Fly-CL model kept in a model file: it loads the
// file when opened and saves it atomically (temporary file, fsync,
// rename) after every change, before the change is acknowledged. The
// model is a deploy.Model, learned and forgotten as the CLI's learn and
// forget do. The learner goroutine (the only caller of Learn and Forget)
// owns it and changes it in place, with no copy of the m×m statistics;
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
	path     string
	model    *deploy.Model // the model and its pipeline, as the CLI keeps them; nil while it cannot be restored
	newModel func() (*flycl.Model, error)
	// declared is the pipeline SetPipeline gave a model that has none
	// (restored with a new model that was never saved).
	declared *modelfile.Pipeline
	// saved: the file exists (was loaded or written), so a model that
	// cannot be read back from it is an error, never a new empty model.
	saved bool
	// save writes the model (deploy.Model.Save; tests inject failures).
	save func(m *deploy.Model, path string) error
	// cur is the published snapshot: written by Learn and Forget, read
	// by Current from any goroutine.
	cur atomic.Pointer[fileView]
	// lock is the model file's single-writer lock, held until Close.
	lock *modelfile.Lock
	// mu guards ident and closed, which the learner and Close write and
	// Health reads.
	mu sync.Mutex
	// ident is the file as this backend last loaded or saved it (zero
	// while there is none).
	ident  modelfile.Ident
	closed bool
	// policy is FileOptions.LambdaPolicy.
	policy flycl.LambdaPolicy
	// journal holds the changes since the last checkpoint (nil: every
	// change rewrites the file); ckpt is when to write a checkpoint.
	journal *modelfile.Journal
	ckpt    Checkpoints
	// entry is the journal entry of the change in progress (set by the
	// change's function).
	entry *modelfile.JournalEntry
	// refactor is FileOptions.Refactor.
	refactor bool
}

// Checkpoints say when a FileBackend with a journal rewrites its model
// file whole: after Entries changes or Bytes of journal, whichever comes
// first, and at Close. Entries 0 keeps no journal: every change rewrites
// the model file (G included) before it is acknowledged.
type Checkpoints struct {
	Entries int
	Bytes   int64
}

// ErrFileChanged is returned (wrapped) for every change refused because
// the model file was replaced or rewritten behind the server.
var ErrFileChanged = errors.New("server: the model file was changed behind the server")

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
	// is rewritten as a checkpoint as they say. Loading replays the
	// journal on the checkpoint, so a kill at any moment loses nothing
	// acknowledged; the replay after a crash costs a learn per entry.
	Checkpoints Checkpoints
	// Refactor makes every learn refactor G + λI instead of updating the
	// factor by the learn's rank-n term (flycl.Model.SetUpdateLimit(0)):
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
	lk, err := modelfile.TakeLock(ctx, path, opt.Lock)
	if err != nil {
		return nil, err
	}
	b := &FileBackend{path: path, newModel: opt.Create, save: (*deploy.Model).Save, lock: lk, policy: opt.LambdaPolicy, ckpt: opt.Checkpoints, refactor: opt.Refactor}
	if err := b.load(); err != nil {
		lk.Unlock()
		return nil, err
	}
	if err := b.openJournal(); err != nil {
		lk.Unlock()
		return nil, err
	}
	b.cur.Store(b.snapshot())
	return b, nil
}

// openJournal (re)opens the journal on the model's checkpoint, when the
// backend keeps one and the file exists. It is called after every load
// and every save: a save replaces the journal file.
func (b *FileBackend) openJournal() error {
	if b.ckpt.Entries <= 0 {
		return nil
	}
	b.journal.Close()
	b.journal = nil
	if !b.saved || b.model == nil {
		return nil
	}
	j, _, err := modelfile.OpenJournal(b.path, b.model.CheckpointVersion(), b.model.CheckpointCRC())
	if err != nil {
		return err
	}
	b.journal = j
	return nil
}

// Checkpoint rewrites the model file whole when its journal holds
// changes, and starts the journal anew. Close calls it.
func (b *FileBackend) Checkpoint() error {
	if b.journal == nil || b.model == nil {
		return nil
	}
	if n, _ := b.journal.Len(); n == 0 {
		return nil
	}
	if err := b.Health(); err != nil {
		return err
	}
	if err := b.save(b.model, b.path); err != nil {
		// the journal still holds every change: nothing is lost
		return b.restore(err)
	}
	b.noteIdent()
	return b.openJournal()
}

// Close releases the model file's lock. The backend takes no changes
// after it.
//
// With a journal, Close first writes a checkpoint (a failure leaves the
// journal, which loses nothing).
func (b *FileBackend) Close() error {
	var err error
	if b.lock != nil && b.Health() == nil {
		err = b.Checkpoint()
	}
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.journal.Close()
	if uerr := b.lock.Unlock(); err == nil {
		err = uerr
	}
	return err
}

// ErrClosed is returned for a change to a closed FileBackend.
var ErrClosed = errors.New("server: the model file is closed")

// Health reports whether the backend can take changes: nil, or why not:
// it is closed, or the file on disk is not the one it last loaded or
// saved (ErrFileChanged; a file put back as it was, the same file
// unchanged, is accepted again).
func (b *FileBackend) Health() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	return b.checkIdentLocked()
}

// checkIdentLocked compares the file on disk with the one this backend
// last loaded or saved. b.mu is held.
func (b *FileBackend) checkIdentLocked() error {
	cur, err := modelfile.IdentOf(b.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("stat %s: %w", b.path, err)
	}
	if !b.ident.Same(cur) {
		what := "replaced or rewritten"
		if cur.IsZero() {
			what = "removed"
		} else if b.ident.IsZero() {
			what = "created"
		}
		v := b.cur.Load().Version()
		return fmt.Errorf("%w: %s was %s by another program since the server last loaded or saved it (version %d); the server refuses changes rather than overwrite it or read it back, and keeps answering predictions with version %d: restart the server to load the file as it is now",
			ErrFileChanged, b.path, what, v, v)
	}
	return nil
}

// noteIdent records the file as just loaded or saved.
func (b *FileBackend) noteIdent() {
	id, _ := modelfile.IdentOf(b.path)
	b.mu.Lock()
	b.ident = id
	b.mu.Unlock()
}

// load reads the file (or creates the empty model when there is none and
// never was), replacing the model in memory.
func (b *FileBackend) load() error {
	b.model = nil // free the old model's statistics before reading
	m, err := deploy.Load(b.path)
	switch {
	case err == nil:
		b.model, b.saved = m, true
		if b.refactor {
			m.SetUpdateLimit(0)
		}
		b.noteIdent()
		return nil
	case errors.Is(err, fs.ErrNotExist) && b.saved:
		return fmt.Errorf("the model file %s has disappeared: %w", b.path, err)
	case errors.Is(err, fs.ErrNotExist) && b.newModel != nil:
		m, err := b.newModel()
		if err != nil {
			return err
		}
		deploy.Calibrate(m)
		if b.refactor {
			m.SetUpdateLimit(0)
		}
		b.model = &deploy.Model{Model: m, Pipeline: b.declared}
		return nil
	}
	return err
}

// Pipeline returns how the model's features are made from an image (nil
// when unknown: a model learned from feature vectors only).
func (b *FileBackend) Pipeline() *modelfile.Pipeline { return b.model.Pipeline }

// SetPipeline declares the backbone that turns images into features. It
// must be the one the model learned with (modelfile.Pipeline.Check); a
// model without a pipeline takes it only while it has learned nothing.
// Call it before serving.
func (b *FileBackend) SetPipeline(p *modelfile.Pipeline) error {
	if b.model == nil {
		if err := b.load(); err != nil {
			return fmt.Errorf("the model could not be read back from %s after a failed change: %w", b.path, err)
		}
	}
	switch {
	case b.model.Pipeline != nil:
		if err := b.model.Pipeline.Check(p); err != nil {
			return fmt.Errorf("%s: %w", b.path, err)
		}
	case b.model.Version() > 0:
		return fmt.Errorf("%s was learned from feature vectors of unknown origin: it cannot take images from %s (serve it without a backbone)", b.path, p.Backbone)
	case p.Dim != b.model.InputDim():
		return fmt.Errorf("backbone %s gives %d features, the model %s wants d=%d", p.Backbone, p.Dim, b.path, b.model.InputDim())
	default:
		b.model.Pipeline, b.declared = p, p
	}
	b.cur.Store(b.snapshot())
	return nil
}

// Config returns the model's Fly-CL configuration.
func (b *FileBackend) Config() flycl.Config { return b.model.Config() }

// Current returns the latest snapshot.
func (b *FileBackend) Current() ModelView { return b.cur.Load() }

// change applies f to the model in place and saves it. When f or the
// save fails, the model is read back from the file (restore), so memory
// again holds exactly the last saved, published model.
func (b *FileBackend) change(f func(m *deploy.Model) error) (save time.Duration, err error) {
	if err := b.Health(); err != nil {
		return 0, err
	}
	if b.model == nil {
		// an earlier restore failed: try again before changing anything
		err := b.load()
		if err == nil {
			if err = b.openJournal(); err != nil {
				b.model = nil
			}
		}
		if err != nil {
			return 0, fmt.Errorf("the model could not be read back from %s after a failed change, so it takes no changes until it can (or the server restarts): %w", b.path, err)
		}
	}
	// A panic once the model may have changed (a bug in the change or
	// the save) is undone as a failure is, then goes on up (the server
	// answers 500): the learner must not go on from a half-changed model.
	defer func() {
		if p := recover(); p != nil {
			b.restore(fmt.Errorf("panic: %v", p))
			panic(p)
		}
	}()
	b.entry = nil
	if err := f(b.model); err != nil {
		if r, ok := err.(*refused); ok {
			return 0, r.err
		}
		return 0, b.restore(err)
	}
	t := time.Now()
	// The file must still be the one this model came from: compare just
	// before the save (a writer that ignores the lock may have replaced
	// it during the change).
	if err := b.Health(); err != nil {
		return 0, b.restore(err)
	}
	// With a journal, the change is durable once appended to it, unless
	// a checkpoint is due.
	if j, e := b.journal, b.entry; j != nil && e != nil {
		n, size := j.Len()
		if n+1 < b.ckpt.Entries && (b.ckpt.Bytes <= 0 || size+int64(4*len(e.X)) < b.ckpt.Bytes) {
			if err := j.Append(e); err != nil {
				return 0, b.restore(err)
			}
			return time.Since(t), nil
		}
	}
	if err := b.save(b.model, b.path); err != nil {
		return 0, b.restore(err)
	}
	b.saved = true
	b.noteIdent()
	if err := b.openJournal(); err != nil {
		// the change is saved (in the checkpoint); the next ones are saved
		// whole while the journal cannot be opened
		return time.Since(t), nil
	}
	if b.journal != nil && b.entry != nil {
		// the checkpoint holds the change; its entry goes to the history
		// (for undo), best effort: the change is durable either way
		b.journal.Append(b.entry)
	}
	return time.Since(t), nil
}

// restore undoes a failed change by reading the model back from its file
// and returns the change's error (with the restore's when that fails too:
// then the model stays unloaded and the next change tries again).
func (b *FileBackend) restore(cause error) error {
	// Free the failed model's statistics, and give their pages back to
	// the system, before the file's are allocated (and touched): else the
	// undo holds two m×m G at once.
	b.model = nil
	debug.FreeOSMemory()
	if err := b.Health(); err != nil {
		// never read back a file that is not this model's
		return fmt.Errorf("%w (and the model cannot be read back: %v)", cause, err)
	}
	if err := b.load(); err != nil {
		return fmt.Errorf("%w (and reading the model back from %s failed: %v)", cause, b.path, err)
	}
	if err := b.openJournal(); err != nil {
		b.model = nil // take no change until the journal opens again
		return fmt.Errorf("%w (and the journal of %s could not be opened: %v)", cause, b.path, err)
	}
	return cause
}

// Learn learns the features x (n×d) with their class names: as one task
// (λ by GCV on it, or opt.Lambda), or with opt.Online in mini-batches of
// opt.Batch; it saves the model and returns the new snapshot. Input the
// model refuses is an *InputError and changes nothing; a learn that fails
// later is undone (see FileBackend).
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
	var res *deploy.LearnResult
	save, err := b.change(func(m *deploy.Model) error {
		if err := m.CheckLearn(x, names, nil, dopt); err != nil {
			return &refused{&InputError{err}}
		}
		before := m.Prior() // what an undo of this learn puts back
		var err error
		if res, err = m.Learn(ctx, x, names, nil, dopt); err != nil {
			return asInput(err)
		}
		b.entry = deploy.LearnEntry(m.Version(), before, x, names, m.InputDim(), dopt)
		return nil
	})
	if err != nil {
		return LearnReport{}, nil, err
	}
	rep := LearnReport{Samples: res.Samples, NewClasses: res.Added, Lambda: res.Lambda, Steps: len(res.Steps), Stages: res.Stages, Save: save, Warnings: res.Warnings}
	sn := b.snapshot()
	b.cur.Store(sn)
	return rep, sn, nil
}

// Forget removes a class. With x (its n×d features) the removal is
// exact: the model equals one that never saw the class. Without, the
// class's column is dropped but G still holds its samples.
func (b *FileBackend) Forget(ctx context.Context, class string, x []float32) (ModelView, error) {
	if !slices.Contains(b.cur.Load().pred.ClassNames(), class) {
		return nil, fmt.Errorf("%w %q", ErrUnknownClass, class)
	}
	if len(x) == 0 {
		x = nil // no data: drop the column
	}
	_, err := b.change(func(m *deploy.Model) error {
		if x != nil && len(x)%m.InputDim() != 0 {
			return &refused{&InputError{fmt.Errorf("%d feature values are not a multiple of d=%d", len(x), m.InputDim())}}
		}
		if _, _, err := m.Forget(ctx, class, x, nil); err != nil {
			return asInput(err)
		}
		b.entry = deploy.ForgetEntry(m.Version(), class, x, m.InputDim())
		return nil
	})
	if err != nil {
		return nil, err
	}
	sn := b.snapshot()
	b.cur.Store(sn)
	return sn, nil
}

// refused marks an error of a change that was refused before it altered
// the model: nothing needs restoring.
type refused struct{ err error }

func (e *refused) Error() string { return e.err.Error() }
func (e *refused) Unwrap() error { return e.err }

func (b *FileBackend) snapshot() *fileView { return viewOf(b.model, b.path) }

// fileView is a published model (a ModelView): an immutable flycl.Predictor.
type fileView struct {
	pred *flycl.Predictor
	info Info
}

func (s *fileView) Version() uint64 { return s.pred.Version() }
func (s *fileView) Dim() int        { return s.pred.InputDim() }
func (s *fileView) Info() Info      { i := s.info; i.Lambdas = slices.Clone(i.Lambdas); return i }
func (s *fileView) Classes() []Class {
	names, counts := s.pred.ClassNames(), s.pred.ClassCounts()
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
	if len(s.pred.Classes()) == 0 {
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
// them (deploy.Model.Undo), each saved as any change: the last learn (to
// nil), or every learn after version *to, as deploy.UndoPlan decides. It
// returns the learns taken back, newest first. It needs the journal
// (Checkpoints); the history it undoes from is modelfile.ReadHistory's.
func (b *FileBackend) Undo(ctx context.Context, to *uint64) (ModelView, []deploy.Undone, error) {
	hist, err := modelfile.ReadHistory(b.path)
	if err != nil {
		return nil, nil, err
	}
	plan, err := deploy.UndoPlan(hist, b.cur.Load().Version(), to)
	if err != nil {
		return nil, nil, asInput(err)
	}
	var done []deploy.Undone
	for _, want := range plan {
		if hist, err = modelfile.ReadHistory(b.path); err != nil {
			return nil, done, err
		}
		_, err = b.change(func(m *deploy.Model) error {
			e, err := m.Undo(ctx, hist)
			if errors.Is(err, deploy.ErrNoUndo) {
				return &refused{&InputError{err}}
			}
			if err != nil {
				return err
			}
			if e.Undoes != want.Version {
				return fmt.Errorf("undo: took back the learn of version %d where the plan said %d", e.Undoes, want.Version)
			}
			b.entry = e
			return nil
		})
		if err != nil {
			if len(done) > 0 {
				err = fmt.Errorf("%w (after taking back %d learn(s), newest first: the model is at version %d)", err, len(done), b.cur.Load().Version())
			}
			return nil, done, err
		}
		done = append(done, deploy.UndoneOf(want))
		b.cur.Store(b.snapshot())
	}
	return b.cur.Load(), done, nil
}

// History lists the changes the model's journal records
// (deploy.History).
func (b *FileBackend) History() ([]deploy.HistoryItem, error) { return deploy.History(b.path) }
