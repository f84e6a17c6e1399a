package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
)

// Options say how Open opens a model file.
type Options struct {
	// Wait is how long to wait for another writer's lock (0: fail at
	// once with a *modelfile.LockedError); Command names this writer to
	// a second one.
	Wait    time.Duration
	Command string
	// ReadOnly opens without the lock, for View and History only.
	ReadOnly bool
	// Journal starts a journal (PATH.journal) when the model has none, at
	// its first Update, so that its changes can be undone; a model with
	// one always records its changes in it.
	Journal bool
	// Create makes the model a missing file starts with (written at the
	// first Update; also what a failed first change goes back to); nil:
	// give one with Store.Create.
	Create func() (*deploy.Model, error)
	// Checkpoints, when Entries > 0, make a change durable by appending
	// it to the journal instead of rewriting the model file, which is
	// rewritten (a checkpoint) every Entries changes, when the records
	// since the last checkpoint pass Bytes, and at Close. A checkpoint
	// that fails (a full disk) leaves the change to the journal and is
	// tried again CheckpointRetry later (30 s when 0).
	Checkpoints     Checkpoints
	CheckpointRetry time.Duration
	// Logger gets a line for every state the store cannot leave by itself
	// (lock file or journal changed behind it, a change that could not be
	// saved, a failed checkpoint); nil: slog.Default().
	Logger *slog.Logger
	// Faults, for tests, replace how the model file is saved and how an
	// entry is appended (a full disk, an encoder bug).
	Faults *Faults
	// Prepare, when not nil, is called with every model loaded or created
	// (e.g. to set its update limit).
	Prepare func(*deploy.Model)
}

// Checkpoints say when a store with a journal rewrites its model file
// (Options.Checkpoints).
type Checkpoints struct {
	Entries int   `flag:"checkpoint-every"`
	Bytes   int64 `flag:"checkpoint-bytes"`
}

// Faults replace the store's writes, for tests (a full disk, an encoder
// bug, a crash at each write: crash_test.go). A nil func is the real one.
type Faults struct {
	Save   func(m *deploy.Model, path string) error
	Append func(j *modelfile.Journal, e *modelfile.JournalEntry) error
	Open   func(path string, cp modelfile.Checkpoint) (*modelfile.Journal, error)
}

// Change is what an Update did, for the journal.
type Change struct {
	// Entry records the change (LearnEntry, ForgetEntry, an undo's
	// entry, MergeEntry); nil records none (and, with Checkpoints, makes
	// the change a checkpoint).
	Entry *modelfile.JournalEntry
}

// Refused marks the error of a change that was refused before it
// altered the model: Update returns it without reading the model back.
func Refused(err error) error { return &refused{err} }

type refused struct{ err error }

func (e *refused) Error() string { return e.err.Error() }
func (e *refused) Unwrap() error { return e.err }

var (
	// ErrReadOnly is returned by Update and Undo on a store opened
	// ReadOnly.
	ErrReadOnly = errors.New("store: opened read-only")
	// ErrNotRecorded is wrapped by Update's error for a change that is
	// durable (saved whole) but whose entry the journal cannot take (one
	// over modelfile.MaxJournalEntry): undo and history do not see it,
	// and do not reach past it (the next record shows the gap).
	ErrNotRecorded = errors.New("store: the change is saved, but not recorded in the journal's history")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("store: closed")
	// ErrFileChanged is wrapped by every change refused because the model
	// file was replaced or rewritten behind the store.
	ErrFileChanged = errors.New("store: the model file was changed behind its writer")
	// ErrNotDurable is wrapped by Health's error after a change that
	// could not be saved (it was refused; nothing acknowledged is lost).
	ErrNotDurable = errors.New("store: the last change could not be saved")
)

// Store is an open model file. Its changes (Create, Declare, Update,
// Learn, Forget, Merge, Undo, Checkpoint, Close) are for one goroutine at
// a time; View and Health may be called from any. The model reaches
// callers only inside View, Hold and Update, under the store's lock: no
// caller keeps a pointer to it.
type Store struct {
	path string
	opt  Options
	log  *slog.Logger
	lock *modelfile.Lock
	// vmu guards the model between a change (held for writing from its
	// start to its end, the read-back included) and View (for reading).
	vmu   sync.RWMutex
	model *deploy.Model // nil: no model yet (the file does not exist), or it could not be read back
	// exists: the file was loaded or written (a model that cannot be read
	// back from it is an error, never a new one).
	exists bool
	// journal: the open journal, with Checkpoints (nil: every change
	// rewrites the file).
	journal *modelfile.Journal
	// ckptErr is the last failed checkpoint, retried from ckptRetry on.
	ckptErr   error
	ckptRetry time.Time
	// mu guards what Health reads: closed, ident, lost, durable, journal
	// (the pointer).
	mu     sync.Mutex
	closed bool
	ident  modelfile.Ident // the file as last loaded or saved
	// lost is why the store stopped taking changes for good: its lock
	// file or journal was removed or replaced behind it.
	lost error
	// durable is the error of the last change that could not be made
	// durable (nil once one is again).
	durable error
	// rescued: the journal was changed behind the store, and the model
	// (every acknowledged change) was saved to a new checkpoint, or that
	// was tried (rescue).
	rescued bool
	// Warnings are what loading noticed and ignored (a torn journal
	// tail), for the caller to show.
	Warnings []string
}

// Open opens the model file at path: it takes its lock (unless
// ReadOnly) and loads it, the journal's changes replayed. A file that
// does not exist gives a store with Options.Create's model, or without a
// model (Model returns nil: give it one with Create before the first
// Update). The folder must exist.
func Open(ctx context.Context, path string, opt *Options) (*Store, error) {
	var o Options
	if opt != nil {
		o = *opt
	}
	if _, err := os.Stat(filepath.Dir(path)); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("store: the folder %s of %s does not exist", filepath.Dir(path), path)
	}
	s := &Store{path: path, opt: o, log: o.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.opt.CheckpointRetry <= 0 {
		s.opt.CheckpointRetry = 30 * time.Second
	}
	if !o.ReadOnly {
		lk, err := modelfile.TakeLock(ctx, path, modelfile.LockOptions{Wait: o.Wait, Command: o.Command})
		if err != nil {
			return nil, err
		}
		s.lock = lk
	}
	err := s.load()
	if err == nil && !o.ReadOnly {
		err = s.openJournal()
	}
	if err != nil {
		s.lock.Unlock()
		return nil, err
	}
	return s, nil
}

// load reads the model from its file (or makes Options.Create's when
// there is none and never was).
func (s *Store) load() error {
	s.model = nil // free the old model's statistics before reading
	m, err := Load(s.path)
	switch {
	case err == nil:
		s.model, s.exists = m, true
		s.Warnings = slices.Clone(m.Warnings)
		s.noteIdent()
		s.prepare()
		return nil
	case errors.Is(err, fs.ErrNotExist) && s.exists:
		return fmt.Errorf("store: the model file %s has disappeared: %w", s.path, err)
	case errors.Is(err, fs.ErrNotExist):
		if !s.opt.ReadOnly {
			s.dropUnborn()
		}
		if s.opt.Create != nil {
			if s.model, err = s.opt.Create(); err != nil {
				return err
			}
			s.prepare()
		}
		return nil
	}
	return err
}

// dropUnborn removes the journal of a model file that was never written:
// a first change records itself in a journal on version 0 before the file
// is saved, and a writer stopped between the two leaves that journal
// alone. Its change was never acknowledged and is in no model: dropped.
func (s *Store) dropUnborn() {
	c, err := modelfile.ReadJournal(s.path, modelfile.Checkpoint{})
	if err == nil && c.Valid > 0 && c.Base == (modelfile.Checkpoint{}) {
		os.Remove(modelfile.JournalPath(s.path))
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: removed the journal of a first change whose model file was never saved (never acknowledged)", modelfile.JournalPath(s.path)))
	}
}

func (s *Store) prepare() {
	if s.opt.Prepare != nil && s.model != nil {
		s.opt.Prepare(s.model)
	}
}

// openJournal (re)opens the journal on the model's checkpoint, with
// Checkpoints and a file: after every load and save.
func (s *Store) openJournal() error {
	s.mu.Lock()
	s.journal.Close()
	s.journal = nil
	s.mu.Unlock()
	if s.opt.Checkpoints.Entries <= 0 || !s.exists || s.model == nil {
		return nil
	}
	j, err := s.openJournalOn(s.model.Checkpoint())
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.journal = j
	s.mu.Unlock()
	return nil
}

// Path returns the model file's path.
func (s *Store) Path() string { return s.path }

// Exists reports whether the model file exists (was loaded or written).
func (s *Store) Exists() bool { return s.exists }

// Create gives a store whose file does not exist yet the model it
// starts with; the first Update writes it.
func (s *Store) Create(m *deploy.Model) error {
	if s.exists {
		return fmt.Errorf("store: %s exists", s.path)
	}
	s.vmu.Lock()
	defer s.vmu.Unlock()
	s.model = m
	return nil
}

// View calls fn with the model (nil when the file does not exist and no
// model was created, or while it cannot be read back after a failed
// change), under the store's read lock: a change waits for it. fn must
// not change the model, keep it (or anything of it that a change alters)
// after it returns, or call the store's changes. A store opened ReadOnly
// has a model too.
func (s *Store) View(fn func(*deploy.Model) error) error {
	if s.isClosed() {
		return ErrClosed
	}
	s.vmu.RLock()
	defer s.vmu.RUnlock()
	return fn(s.model)
}

// Hold calls fn with the model (nil as for View) under the store's lock
// held alone, for what changes the model in memory only and is no change
// of it: its caches (a factor of G + λI that a report computes as a learn
// would), or the pipeline a server declares for a model that has learned
// nothing yet (its first change saves it). Nothing is recorded or saved,
// and a failed change's read-back forgets it. fn must not keep the model
// after it returns, or call the store's changes.
func (s *Store) Hold(fn func(*deploy.Model) error) error {
	if s.isClosed() {
		return ErrClosed
	}
	s.vmu.Lock()
	defer s.vmu.Unlock()
	return fn(s.model)
}

func (s *Store) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Health reports whether the store can take changes: nil, or why not:
// it is closed; its lock file or journal was removed or replaced behind
// it (modelfile.ErrLockLost, modelfile.ErrJournalChanged: for good); the
// file on disk is not the one it last loaded or saved (ErrFileChanged; a
// file put back as it was is accepted again); or the last change could
// not be made durable (ErrNotDurable: cleared by the next that is).
func (s *Store) Health() error {
	if err := s.refuse(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.durable
}

// refuse reports whether a change must be refused: closed, lock or
// journal lost, file changed behind the store.
func (s *Store) refuse() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return ErrClosed
	case s.opt.ReadOnly:
		return ErrReadOnly
	case s.lost != nil:
		return s.lost
	}
	lost := s.lock.Check()
	if lost == nil && s.journal != nil {
		lost = s.journal.Check()
	}
	if lost != nil {
		s.lost = lost
		s.log.Error("no more changes are taken (predictions go on)", "model", s.path, "reason", lost.Error())
		return lost
	}
	cur, err := modelfile.IdentOf(s.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("stat %s: %w", s.path, err)
	}
	if !s.ident.Same(cur) {
		what := "replaced or rewritten"
		if cur.IsZero() {
			what = "removed"
		} else if s.ident.IsZero() {
			what = "created"
		}
		return fmt.Errorf("%w: %s was %s by another program since it was last loaded or saved here; no change is taken rather than overwrite it or read it back: restart to load the file as it is now",
			ErrFileChanged, s.path, what)
	}
	return nil
}

// refuseWriter is refuse, called by the writer when its model holds
// exactly the acknowledged changes (before a change, at Checkpoint and
// Close): a journal changed behind the store (removed, replaced, cut or
// written to) is answered once by rescue.
func (s *Store) refuseWriter() error {
	err := s.refuse()
	if err != nil && errors.Is(err, modelfile.ErrJournalChanged) && !s.rescued && s.model != nil && s.journal != nil {
		s.rescued = true
		s.rescue(err)
		s.mu.Lock()
		err = s.lost
		s.mu.Unlock()
	}
	return err
}

// rescue saves the model, which holds every change acknowledged, to a
// new checkpoint after its journal was changed behind the store (so that
// none of them is lost with the journal), and starts the journal anew on
// it, keeping what history the changed journal still gives (an undo does
// not reach past what it lost: Unbroken). The store takes no more
// changes (the journal was changed by another program: a restart loads
// the file as it then is); its Health says whether the rescue was done.
// The lock must still be this store's and the model file the one it
// last loaded or saved, else nothing is written.
func (s *Store) rescue(cause error) {
	m := s.model
	err := s.lock.Check()
	if err == nil {
		if cur, _ := modelfile.IdentOf(s.path); !s.ident.Same(cur) {
			err = fmt.Errorf("%w: %s", ErrFileChanged, s.path)
		}
	}
	if err == nil {
		err = s.save(m)
	}
	var lost error
	if err != nil {
		lost = fmt.Errorf("%w; the changes acknowledged since the last checkpoint could not be saved to a new one (%v): do not restart before the journal is restored, or they are lost", cause, err)
		s.log.Error("the journal was changed behind the store, and its changes could not be saved to a new checkpoint", "model", s.path, "reason", err.Error())
	} else {
		s.noteIdent()
		if jerr := s.openJournal(); jerr != nil {
			s.log.Warn("the journal could not be started anew on the new checkpoint", "model", s.path, "reason", jerr.Error())
		}
		lost = fmt.Errorf("%w; every change acknowledged (up to version %d) was saved to a new checkpoint of %s and its journal started anew (its history from before may be lost: an undo does not reach past it); restart to take changes again", cause, m.Model.Version(), s.path)
		s.log.Warn("the journal was changed behind the store: every change acknowledged was saved to a new checkpoint", "model", s.path, "version", m.Model.Version())
	}
	s.mu.Lock()
	s.lost = lost
	s.mu.Unlock()
}

// noteIdent records the file as just loaded or saved.
func (s *Store) noteIdent() {
	id, _ := modelfile.IdentOf(s.path)
	s.mu.Lock()
	s.ident = id
	s.mu.Unlock()
}

// setDurable records whether the last change was made durable.
func (s *Store) setDurable(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		err = fmt.Errorf("%w (%v): it was refused, and nothing acknowledged before it is lost; changes are taken again once one can be saved (is the disk full?)", ErrNotDurable, err)
		if s.durable == nil {
			s.log.Error("a change could not be saved", "model", s.path, "reason", err.Error())
		}
	} else if s.durable != nil {
		s.log.Info("changes are saved again", "model", s.path)
	}
	s.durable = err
}

func (s *Store) save(m *deploy.Model) error {
	if f := s.opt.Faults; f != nil && f.Save != nil {
		return f.Save(m, s.path)
	}
	return saveModel(m, s.path)
}

func (s *Store) appendEntry(j *modelfile.Journal, e *modelfile.JournalEntry) error {
	if f := s.opt.Faults; f != nil && f.Append != nil {
		return f.Append(j, e)
	}
	return j.Append(e)
}

// Update makes one change to the model durable: fn changes the model in
// place and returns the Change for the journal. When fn fails or panics,
// or the save fails, the model is read back from its file (the last
// durable state) and the error returned (a panic goes on up after that;
// an error marked Refused is returned as it is). The store's lock,
// journal and file are checked before the change, before the save and
// (the lock) again after it: a store whose lock file or journal was
// removed or replaced writes nothing, or acknowledges nothing, and takes
// no change after. The change's record is appended to the journal
// first (commit); with Checkpoints that makes it durable, and a
// checkpoint follows when due (one that fails leaves the change to the
// journal). Update returns nil only once the change is durable.
func (s *Store) Update(ctx context.Context, fn func(*deploy.Model) (Change, error)) (err error) {
	s.vmu.Lock()
	defer s.vmu.Unlock()
	return s.update(ctx, fn)
}

// update is Update, the store's lock held.
func (s *Store) update(ctx context.Context, fn func(*deploy.Model) (Change, error)) (err error) {
	if err := s.refuseWriter(); err != nil {
		return err
	}
	if s.model == nil && s.exists {
		// an earlier read-back failed: try again before changing anything
		err := s.load()
		if err == nil {
			if err = s.openJournal(); err != nil {
				s.model = nil
			}
		}
		if err != nil {
			return fmt.Errorf("store: the model could not be read back from %s after a failed change, so it takes no changes until it can: %w", s.path, err)
		}
	}
	if s.model == nil {
		return fmt.Errorf("store: %s does not exist: give the store a model (Create) first", s.path)
	}
	defer func() {
		if p := recover(); p != nil {
			s.rollback(fmt.Errorf("panic: %v", p))
			panic(p)
		}
	}()
	v0 := s.model.Model.Version()
	ch, err := fn(s.model)
	if err != nil {
		var r *refused
		if errors.As(err, &r) {
			return r.err
		}
		return s.rollback(err)
	}
	if err := ctx.Err(); err != nil {
		return s.rollback(err)
	}
	if err := s.refuse(); err != nil {
		return s.rollback(err)
	}
	if e := ch.Entry; e != nil && e.VersionBefore == 0 {
		e.VersionBefore = v0
	}
	return s.commit(ch)
}

// commit makes the change fn made durable, its record first: the change's
// journal record is appended and synced before the model file names the
// change (a checkpoint), so that whatever instant a crash hits, the change
// is in the history if and only if it is in the model. A crash after the
// record and before the checkpoint leaves a record above the model file,
// which the next load replays (the change is completed; a merge, which
// cannot be replayed, is dropped instead: modelfile.ReadJournal); a crash
// after the checkpoint leaves a record the checkpoint holds (history).
//
// With Checkpoints the record alone makes the change durable, and a
// checkpoint follows when due (a merge's always: it is never replayed).
// Without, the model file is rewritten whole after the record (when the
// model keeps a journal, or Options.Journal starts one). A record the
// journal cannot take (one over modelfile.MaxJournalEntry) is saved
// whole, unrecorded (ErrNotRecorded).
func (s *Store) commit(ch Change) error {
	m, e := s.model, ch.Entry
	j := s.journal // with Checkpoints
	if e != nil && j == nil && s.recordsHistory() {
		// a journal for this one record (the model file's checkpoint: m
		// is not saved yet)
		var err error
		if j, err = s.openJournalOn(m.Checkpoint()); err != nil {
			err = fmt.Errorf("store: the journal of %s, where the change is recorded first, could not be opened: %w", s.path, err)
			s.setDurable(err)
			return s.rollback(err)
		}
		defer j.Close()
	}
	recorded, mark := false, int64(0)
	var unrecorded error
	if e != nil && j != nil {
		if size := modelfile.RecordSize(e); size-8 > modelfile.MaxJournalEntry {
			unrecorded = fmt.Errorf("%w (flycl undo cannot take it back): its record of %d bytes is over the journal's %d", ErrNotRecorded, size, modelfile.MaxJournalEntry)
		} else {
			mark = j.Size()
			if err := s.appendEntry(j, e); err != nil {
				s.setDurable(err)
				return s.rollback(err)
			}
			recorded = true
		}
	}
	// with Checkpoints, a recorded change is durable now: a checkpoint
	// only when due (a merge's, and an unrecorded change's, always)
	journalled := s.journal != nil && recorded && e.Op != "merge"
	if journalled {
		n, _ := j.Len()
		cp := s.opt.Checkpoints
		due := n >= cp.Entries || (cp.Bytes > 0 && j.Pending() >= cp.Bytes)
		if !due || time.Now().Before(s.ckptRetry) {
			s.setDurable(nil)
			return s.lock.Check()
		}
	}
	if err := s.save(m); err != nil {
		if journalled {
			// the journal holds the change: a checkpoint that fails (a
			// full disk) loses nothing, and is tried again later
			s.ckptErr, s.ckptRetry = err, time.Now().Add(s.opt.CheckpointRetry)
			s.log.Warn("a checkpoint failed: changes go to the journal, and the checkpoint is tried again later", "model", s.path, "retry", s.opt.CheckpointRetry, "reason", err.Error())
			s.setDurable(nil)
			return s.lock.Check()
		}
		if recorded {
			// the record of a change that is not saved must not be
			// replayed by the next load
			if derr := j.Drop(mark); derr != nil {
				err = fmt.Errorf("%w (and its record could not be taken back out of the journal, so the next load may complete the change: %v)", err, derr)
			}
		}
		s.setDurable(err)
		return s.rollback(err)
	}
	return errors.Join(unrecorded, s.saved())
}

// recordsHistory reports whether a store whose journal is not open (no
// Checkpoints, or no model file yet) records its changes in a journal:
// the model keeps one, or Options.Journal or Checkpoints start it.
func (s *Store) recordsHistory() bool {
	if s.opt.Journal || s.opt.Checkpoints.Entries > 0 {
		return true
	}
	_, err := os.Stat(modelfile.JournalPath(s.path))
	return err == nil
}

// openJournalOn opens the journal on the checkpoint cp (Faults.Open, for
// tests, replaces it).
func (s *Store) openJournalOn(cp modelfile.Checkpoint) (*modelfile.Journal, error) {
	if f := s.opt.Faults; f != nil && f.Open != nil {
		return f.Open(s.path, cp)
	}
	j, _, err := modelfile.OpenJournal(s.path, cp)
	return j, err
}

// saved follows a save of the whole model (a checkpoint), which made the
// change durable and started the journal anew on it (keeping the
// history, the change's record included).
func (s *Store) saved() error {
	s.setDurable(nil)
	s.ckptErr, s.ckptRetry = nil, time.Time{}
	s.exists = true
	s.noteIdent()
	if s.opt.Checkpoints.Entries > 0 {
		// while the journal cannot be opened the next changes are saved
		// whole (their records then miss from the history)
		if err := s.openJournal(); err != nil {
			s.log.Warn("the journal could not be opened on the new checkpoint: changes are saved whole, unrecorded, until it can", "model", s.path, "reason", err.Error())
		}
	}
	return s.lock.Check()
}

// rollback reads the model back from its file after a failed change and
// returns the change's error (with the read's when that fails too: then
// the store has no model until an Update reads it again).
func (s *Store) rollback(cause error) error {
	// free the failed model's statistics, and give their pages back to
	// the system, before the file's are read: else a rollback holds two
	// m×m G at once
	s.model = nil
	debug.FreeOSMemory()
	if err := s.refuse(); err != nil {
		// never read back a file that is not this model's
		return fmt.Errorf("%w (and the model cannot be read back: %v)", cause, err)
	}
	if err := s.load(); err != nil {
		return fmt.Errorf("%w (and reading the model back from %s failed: %v)", cause, s.path, err)
	}
	if err := s.openJournal(); err != nil {
		s.model = nil // take no change until the journal opens again
		return fmt.Errorf("%w (and the journal of %s could not be opened: %v)", cause, s.path, err)
	}
	return cause
}

// Checkpoint rewrites the model file whole when its journal holds
// changes, and starts the journal anew. Close calls it.
func (s *Store) Checkpoint() error {
	s.vmu.Lock()
	defer s.vmu.Unlock()
	if s.journal == nil || s.model == nil {
		return nil
	}
	if n, _ := s.journal.Len(); n == 0 {
		return nil
	}
	if err := s.refuseWriter(); err != nil {
		return err
	}
	if err := s.save(s.model); err != nil {
		// the journal still holds every change: nothing is lost
		return s.rollback(err)
	}
	s.noteIdent()
	return s.openJournal()
}

// Close writes a checkpoint when the journal holds changes (a failure
// leaves the journal, which loses nothing), then releases the lock
// (removing the lock file). The store takes no change after it.
func (s *Store) Close() error {
	if s.isClosed() {
		return nil
	}
	var err error
	if s.lock != nil && s.refuseWriter() == nil {
		err = s.Checkpoint()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.journal.Close()
	if uerr := s.lock.Unlock(); err == nil {
		err = uerr
	}
	return err
}

// History returns the journal's history (every whole entry, oldest
// first; none without a journal).
func (s *Store) History() ([]*modelfile.JournalEntry, error) {
	var id modelfile.ModelID
	if s.model != nil {
		id = s.model.ID()
	}
	return modelfile.ReadHistory(s.path, id)
}

// Undo takes learns back out exactly, one durable change each, as
// UndoPlan decides: the last learn (to nil), or every learn after
// version *to not undone yet, newest first (*to 0: the model as created;
// nothing when it already is). It returns the undo entries written. An
// undo the journal cannot do (UndoPlan's refusals, UndoLast's)
// wraps ErrNoUndo and changes nothing.
func (s *Store) Undo(ctx context.Context, to *uint64) ([]*modelfile.JournalEntry, error) {
	return s.UndoEach(ctx, to, nil)
}

// UndoEach is Undo, calling each (when not nil) after every learn taken
// back is durable, with the learn's journal entry and its undo's: the CLI and the server share this
// one loop, the server publishing every version as it is saved. A step
// that is saved but whose entry the journal could not take
// (ErrNotRecorded) counts as done, and ends the loop with that error:
// the next step's history would not show it.
func (s *Store) UndoEach(ctx context.Context, to *uint64, each func(learn, undo *modelfile.JournalEntry)) ([]*modelfile.JournalEntry, error) {
	return s.UndoIf(ctx, Undo{To: to}, each)
}

// Undo says what Store.UndoIf takes back, and on what condition.
type Undo struct {
	// To: every learn after this version (nil: the last learn).
	To *uint64
	// Version, when not nil, is the learn the undo must take back first:
	// when it is not the last (CheckLast), nothing is undone and
	// the error wraps ErrNotLast.
	Version *uint64
	// Model, when not nil, is the version the model must be at (an HTTP
	// If-Match): else nothing is undone and the error wraps
	// ErrNotLast.
	Model *uint64
}

// UndoIf is UndoEach with the preconditions of u, checked before
// anything is undone.
func (s *Store) UndoIf(ctx context.Context, u Undo, each func(learn, undo *modelfile.JournalEntry)) ([]*modelfile.JournalEntry, error) {
	if s.model == nil {
		return nil, fmt.Errorf("store: %s has no model to undo", s.path)
	}
	to := u.To
	hist, err := s.History()
	if err != nil {
		return nil, err
	}
	if u.Model != nil && *u.Model != s.model.Model.Version() {
		return nil, flycl.Input(fmt.Errorf("%w: the model is at version %d, not %d: another change came first, so nothing is undone", ErrNotLast, s.model.Model.Version(), *u.Model))
	}
	if u.Version != nil {
		if err := CheckLast(hist, *u.Version); err != nil {
			return nil, err
		}
	}
	plan, err := UndoPlan(hist, s.model.Model.Version(), to)
	if err != nil {
		return nil, err
	}
	var done []*modelfile.JournalEntry
	for _, want := range plan {
		if hist, err = s.History(); err != nil {
			return done, err
		}
		var e *modelfile.JournalEntry
		err = s.Update(ctx, func(m *deploy.Model) (Change, error) {
			var err error
			if e, err = UndoLast(ctx, m, hist); err != nil {
				if errors.Is(err, ErrNoUndo) {
					// refused before the model changed: nothing to read back
					return Change{}, Refused(err)
				}
				return Change{}, err
			}
			if e.Undoes != want.Version {
				return Change{}, fmt.Errorf("store: undo took back the learn of version %d where the plan said %d", e.Undoes, want.Version)
			}
			return Change{Entry: e}, nil
		})
		if err != nil && !(errors.Is(err, ErrNotRecorded) && e != nil) {
			return done, err
		}
		done = append(done, e)
		if each != nil {
			each(want, e)
		}
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// journalSamples returns the features of class's samples when the
// journal's history holds every one the model learned (an exact forget
// without the data), else nil. The store's lock is held (Forget's Update).
func (s *Store) journalSamples(class string) []float32 {
	m := s.model
	if m == nil {
		return nil
	}
	n := classCount(m, class)
	hist, err := s.History()
	if err != nil || n <= 0 {
		return nil
	}
	if xs := JournalSamples(hist, class, m.Model.InputDim()); len(xs) == n*m.Model.InputDim() {
		return xs
	}
	return nil
}

// Repair makes the journal of the model file at path readable with it
// again (modelfile.RepairJournal: the longest valid prefix of a damaged
// journal, or another model's journal moved aside, after a copy), holding
// the model file's lock, and returns the report and the model as it then
// loads.
func Repair(ctx context.Context, path string, opt *Options) (*modelfile.RepairReport, *deploy.Model, error) {
	var o Options
	if opt != nil {
		o = *opt
	}
	lk, err := modelfile.TakeLock(ctx, path, modelfile.LockOptions{Wait: o.Wait, Command: o.Command})
	if err != nil {
		return nil, nil, err
	}
	defer lk.Unlock()
	rep, err := modelfile.RepairJournal(path)
	if err != nil {
		return nil, nil, err
	}
	if err := lk.Check(); err != nil {
		return rep, nil, err
	}
	m, err := Load(path)
	if err != nil {
		return rep, nil, fmt.Errorf("the model still does not load: %w", err)
	}
	return rep, m, nil
}
