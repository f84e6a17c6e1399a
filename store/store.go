package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/flycl/flycl/deploy"
	"github.com/flycl/flycl/modelfile"
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
}

// Change is what an Update did, for the journal's history.
type Change struct {
	// Entry records the change (deploy.LearnEntry, ForgetEntry, an undo's
	// entry, MergeEntry); nil records none.
	Entry *modelfile.JournalEntry
}

// ErrReadOnly is returned by Update and Undo on a store opened ReadOnly.
var ErrReadOnly = errors.New("store: opened read-only")

// ErrNotRecorded is wrapped by Update's error for a change that is
// durable (saved) but whose entry the journal could not take: undo and
// history do not see it.
var ErrNotRecorded = errors.New("store: the change is saved, but not recorded in the journal's history")

// ErrClosed is returned after Close.
var ErrClosed = errors.New("store: closed")

// Store is an open model file.
type Store struct {
	path  string
	opt   Options
	lock  *modelfile.Lock
	model *deploy.Model // nil: no model yet (the file does not exist), or it could not be read back
	// exists: the file was loaded or written (a model that cannot be read
	// back from it is an error, never a new one).
	exists bool
	closed bool
	// Warnings are what loading noticed and ignored (a torn journal
	// tail), for the caller to show.
	Warnings []string
}

// Open opens the model file at path: it takes its lock (unless
// ReadOnly) and loads it, the journal's changes replayed. A file that
// does not exist gives a store without a model (Model returns nil): give
// it one with Create before the first Update. The folder must exist.
func Open(ctx context.Context, path string, opt *Options) (*Store, error) {
	var o Options
	if opt != nil {
		o = *opt
	}
	if _, err := os.Stat(filepath.Dir(path)); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("store: the folder %s of %s does not exist", filepath.Dir(path), path)
	}
	s := &Store{path: path, opt: o}
	if !o.ReadOnly {
		lk, err := modelfile.TakeLock(ctx, path, modelfile.LockOptions{Wait: o.Wait, Command: o.Command})
		if err != nil {
			return nil, err
		}
		s.lock = lk
	}
	if err := s.load(); err != nil {
		s.lock.Unlock()
		return nil, err
	}
	return s, nil
}

// load reads the model from its file (none when the file does not exist
// and never did).
func (s *Store) load() error {
	s.model = nil
	m, err := deploy.Load(s.path)
	switch {
	case err == nil:
		s.model, s.exists = m, true
		s.Warnings = slices.Clone(m.Warnings)
		return nil
	case errors.Is(err, fs.ErrNotExist) && !s.exists:
		return nil
	}
	return err
}

// Path returns the model file's path.
func (s *Store) Path() string { return s.path }

// Exists reports whether the model file exists (was loaded or written).
func (s *Store) Exists() bool { return s.exists }

// Create gives a store whose file does not exist yet the model it
// starts with; the first Update writes it.
func (s *Store) Create(m *deploy.Model) error {
	if s.exists || s.model != nil {
		return fmt.Errorf("store: %s exists", s.path)
	}
	s.model = m
	return nil
}

// View calls fn with the model (nil when the file does not exist and no
// model was created). fn must not change it.
func (s *Store) View(fn func(*deploy.Model) error) error {
	if s.closed {
		return ErrClosed
	}
	return fn(s.model)
}

// Update makes one change to the model durable: fn changes the model in
// place and returns the Change for the journal's history. When fn fails
// or panics, or the save fails, the model is read back from its file (the
// last durable state) and the error returned (a panic goes on up after
// that). The lock is checked before the save and again after it: a store
// whose lock file was removed or replaced (modelfile.ErrLockLost) writes
// nothing, or acknowledges nothing, and takes no change after. Update
// returns nil only once the change is durable.
func (s *Store) Update(ctx context.Context, fn func(*deploy.Model) (Change, error)) (err error) {
	switch {
	case s.closed:
		return ErrClosed
	case s.opt.ReadOnly:
		return ErrReadOnly
	case s.model == nil && s.exists:
		if err := s.load(); err != nil {
			return fmt.Errorf("store: the model could not be read back from %s after a failed change: %w", s.path, err)
		}
	case s.model == nil:
		return fmt.Errorf("store: %s does not exist: give the store a model (Create) first", s.path)
	}
	if err := s.lock.Check(); err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			s.rollback(fmt.Errorf("panic: %v", p))
			panic(p)
		}
	}()
	ch, err := fn(s.model)
	if err != nil {
		return s.rollback(err)
	}
	if err := ctx.Err(); err != nil {
		return s.rollback(err)
	}
	if err := s.lock.Check(); err != nil {
		return s.rollback(err)
	}
	m := s.model
	if err := m.Save(s.path); err != nil {
		return s.rollback(err)
	}
	s.exists = true
	if ch.Entry != nil {
		if s.opt.Journal {
			if err := m.StartJournal(s.path); err != nil {
				return errors.Join(fmt.Errorf("%w (flycl undo cannot take it back): the journal could not be started: %w", ErrNotRecorded, err), s.lock.Check())
			}
		}
		if err := m.AppendHistory(s.path, ch.Entry); err != nil {
			return errors.Join(fmt.Errorf("%w (flycl undo cannot take it back): %w", ErrNotRecorded, err), s.lock.Check())
		}
	}
	return s.lock.Check()
}

// rollback reads the model back from its file after a failed change and
// returns the change's error (with the read's when that fails too: then
// the store has no model until an Update reads it again).
func (s *Store) rollback(cause error) error {
	if s.lock.Check() != nil {
		s.model = nil
		return cause
	}
	if !s.exists {
		s.model = nil // nothing durable yet: the caller creates again
		return cause
	}
	if err := s.load(); err != nil {
		return fmt.Errorf("%w (and reading the model back from %s failed: %v)", cause, s.path, err)
	}
	return cause
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

// Undo takes back, one durable change each, the last learn (to 0) or
// every learn after version to (a learn the journal can go back to; its
// own version: nothing to do), and returns the undo entries written.
func (s *Store) Undo(ctx context.Context, to uint64) ([]*modelfile.JournalEntry, error) {
	var done []*modelfile.JournalEntry
	for {
		hist, err := s.History()
		if err != nil {
			return done, err
		}
		st := deploy.Undoable(hist)
		if to > 0 {
			i := slices.IndexFunc(st, func(e *modelfile.JournalEntry) bool { return e.Version == to })
			if i < 0 {
				return done, fmt.Errorf("%w: version %d is not a learn the journal can go back to (see flycl history)", deploy.ErrNoUndo, to)
			}
			if i == len(st)-1 {
				return done, nil
			}
		}
		var e *modelfile.JournalEntry
		err = s.Update(ctx, func(m *deploy.Model) (Change, error) {
			var err error
			e, err = m.Undo(ctx, hist)
			return Change{Entry: e}, err
		})
		if err != nil {
			return done, err
		}
		done = append(done, e)
		if to == 0 {
			return done, nil
		}
	}
}

// JournalSamples returns the features of class's samples when the
// journal's history holds every one the model learned (an exact forget
// without the data), else nil.
func (s *Store) JournalSamples(class string) []float32 {
	m := s.model
	if m == nil {
		return nil
	}
	label, ok := m.LabelOf(class)
	if !ok {
		return nil
	}
	n := -1
	for i, l := range m.Classes() {
		if l == label {
			n = m.ClassCounts()[i]
		}
	}
	hist, err := s.History()
	if err != nil || n <= 0 {
		return nil
	}
	if xs := deploy.JournalSamples(hist, class); len(xs) == n*m.InputDim() {
		return xs
	}
	return nil
}

// Model returns the model (nil when there is none yet). The caller must
// not change it outside Update.
func (s *Store) Model() *deploy.Model { return s.model }

// Close releases the lock (removing the lock file). The store takes no
// change after it.
func (s *Store) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	return s.lock.Unlock()
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
	m, err := deploy.Load(path)
	if err != nil {
		return rep, nil, fmt.Errorf("the model still does not load: %w", err)
	}
	return rep, m, nil
}
