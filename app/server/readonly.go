package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/codec"
)

// ErrReadOnly is returned (wrapped) for every change sent to a read-only
// server; it answers 405 Method Not Allowed.
var ErrReadOnly = errors.New("server: this server is read-only (flycl serve --read-only): it answers predictions and follows the model file's writer; send learns, forgets and undos to the server that writes the file")

// ReadOnlyOptions say how OpenReadOnly follows its model file.
type ReadOnlyOptions struct {
	// Poll is how often the backend looks for a new version of the file
	// (its identity, and its journal's: inode, size, modification time);
	// 0 never: the caller calls Reload.
	Poll time.Duration
	// Logger receives a line for every version loaded and every reload
	// that failed (nil: slog.Default()).
	Logger *slog.Logger
}

// ReadOnlyBackend serves a model file that another process writes (a
// flycl serve, learn, forget or merge): many read-only servers may answer
// predictions from one file while one writer changes it. It takes no
// lock and writes nothing: not the model file, its journal or its lock
// file, so it starts on a file it may not write (mode 0444, a read-only
// directory) and while a writer holds the lock.
//
// It loads the file as every reader does (store.Load: the checkpoint
// and the changes its journal holds since), and loads it again when the
// file or its journal changes (Reload, every Poll). A new version replaces
// the served one atomically, and only when it loaded whole and the files
// did not change while they were read: a file being written, torn or
// damaged never replaces the good view (Health says why it was refused,
// and the next change of the file is tried again). Predictions go on from
// the served view during a reload.
//
// Every change (Learn, Forget, Undo) fails with ErrReadOnly.
type ReadOnlyBackend struct {
	path string
	log  *slog.Logger
	cur  atomic.Pointer[fileView]
	// pipeline is the model's backbone identity as first loaded (nil: a
	// model of feature vectors); a reload must keep it.
	pipeline *modelfile.Pipeline
	// cfg is the first loaded model's configuration (a reload must keep d).
	cfg flycl.Config
	dim int

	// reload serializes Reload and OnChange, and guards seen and
	// watchers; mu guards pipeline and lastErr, which health checks read
	// while a reload may take a while.
	reload   sync.Mutex
	seen     readIdent
	watchers []func(ModelView)
	mu       sync.Mutex
	lastErr  error

	stop, done chan struct{}
	closeOnce  sync.Once
}

// readIdent is the identity of a model file and its journal.
type readIdent struct{ file, journal modelfile.Ident }

func (a readIdent) same(b readIdent) bool { return a.file.Same(b.file) && a.journal.Same(b.journal) }

func identOfFiles(path string) (readIdent, error) {
	f, err := modelfile.IdentOf(path)
	if err != nil {
		return readIdent{}, err
	}
	j, err := modelfile.IdentOf(modelfile.JournalPath(path))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return readIdent{}, err
	}
	return readIdent{file: f, journal: j}, nil
}

// OpenReadOnly opens the model file at path for serving predictions only.
// The file must exist.
func OpenReadOnly(path string, opt ReadOnlyOptions) (*ReadOnlyBackend, error) {
	b := &ReadOnlyBackend{path: path, log: opt.Logger, stop: make(chan struct{}), done: make(chan struct{})}
	if b.log == nil {
		b.log = slog.Default()
	}
	// a file being written as it is opened is read again, a few times
	var m *deploy.Model
	var id readIdent
	var err error
	for range 5 {
		if m, id, err = b.load(); err == nil || errors.Is(err, fs.ErrNotExist) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return nil, err
	}
	b.pipeline, b.cfg, b.dim, b.seen = m.Pipeline, m.Model.Config(), m.Model.InputDim(), id
	b.cur.Store(viewOf(m, path))
	if opt.Poll > 0 {
		go b.follow(opt.Poll)
	} else {
		close(b.done)
	}
	return b, nil
}

// load reads the model file with its journal, and the files' identity
// before and after: a load during which they changed is an error.
func (b *ReadOnlyBackend) load() (*deploy.Model, readIdent, error) {
	id, err := identOfFiles(b.path)
	if err != nil {
		return nil, id, err
	}
	m, err := store.Load(b.path)
	if err != nil {
		return nil, id, err
	}
	after, err := identOfFiles(b.path)
	if err != nil {
		return nil, id, err
	}
	if !after.same(id) {
		return nil, after, errChangedWhileRead
	}
	return m, id, nil
}

var errChangedWhileRead = errors.New("the model file or its journal changed while it was read")

// follow reloads every poll until Close.
func (b *ReadOnlyBackend) follow(poll time.Duration) {
	defer close(b.done)
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			b.Reload()
		}
	}
}

// Reload loads the model file again when it or its journal changed since
// the last load, and serves the new version when it loaded whole (see
// ReadOnlyBackend). It reports whether a new view is served; the error
// says why a changed file was not loaded (the view served stays).
func (b *ReadOnlyBackend) Reload() (bool, error) {
	b.reload.Lock()
	defer b.reload.Unlock()
	id, err := identOfFiles(b.path)
	if err == nil && id.same(b.seen) {
		return false, b.ReloadError()
	}
	var m *deploy.Model
	if err == nil {
		m, id, err = b.load()
	}
	if err == nil {
		err = b.compatible(m)
	}
	if err != nil {
		if !errors.Is(err, errChangedWhileRead) && !errors.Is(err, fs.ErrNotExist) {
			// the same bytes would fail again: wait for the next change
			b.seen = id
		}
		v := b.cur.Load().Version()
		err = fmt.Errorf("reload %s: %w (still serving version %d)", b.path, err, v)
		if last := b.ReloadError(); last == nil || last.Error() != err.Error() {
			b.log.Warn("the model file changed but could not be loaded; serving the version loaded before", "model", b.path, "version", v, "err", err)
		}
		b.mu.Lock()
		b.lastErr = err
		b.mu.Unlock()
		return false, err
	}
	b.seen = id
	b.mu.Lock()
	b.lastErr = nil
	b.mu.Unlock()
	old := b.cur.Load()
	sn := viewOf(m, b.path)
	b.cur.Store(sn)
	lvl := slog.LevelInfo
	if sn.Version() == old.Version() {
		lvl = slog.LevelDebug // a checkpoint of the version served
	}
	b.log.Log(context.Background(), lvl, "loaded a new version of the model file", "model", b.path, "version", sn.Version(), "was", old.Version(), "classes", len(sn.Classes()))
	for _, w := range b.watchers {
		w(sn)
	}
	return true, nil
}

// compatible reports whether a reloaded model can replace the served one:
// the same input dimension and backbone (a file replaced by another
// model's is refused until the server restarts).
func (b *ReadOnlyBackend) compatible(m *deploy.Model) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if d := m.Model.InputDim(); d != b.dim {
		return fmt.Errorf("the file now holds a model of d=%d, the server serves d=%d: restart it to serve the new model", d, b.dim)
	}
	switch {
	case (m.Pipeline == nil) != (b.pipeline == nil) && m.Model.Version() > 0 && b.cur.Load().Version() > 0:
		return fmt.Errorf("the file now holds a model of another backbone: restart the server to serve it")
	case m.Pipeline != nil && b.pipeline != nil:
		if err := b.pipeline.Check(m.Pipeline); err != nil {
			return fmt.Errorf("the file now holds a model of another backbone (%v): restart the server to serve it", err)
		}
	case m.Pipeline != nil:
		b.pipeline = m.Pipeline
	}
	return nil
}

// OnChange calls f with the view served now and registers it to be
// called with every new view Reload serves (the Server publishes them in
// order). f runs on the reloading goroutine.
func (b *ReadOnlyBackend) OnChange(f func(ModelView)) {
	b.reload.Lock()
	defer b.reload.Unlock()
	b.watchers = append(b.watchers, f)
	f(b.cur.Load())
}

// Close stops following the file. It writes nothing.
func (b *ReadOnlyBackend) Close() error {
	b.closeOnce.Do(func() { close(b.stop) })
	<-b.done
	return nil
}

// ReadOnly reports that the backend takes no changes (the server refuses
// them before reading their bodies).
func (b *ReadOnlyBackend) ReadOnly() bool { return true }

// ReloadError says why the last change of the file could not be loaded
// (nil when the version served is the file's).
func (b *ReadOnlyBackend) ReloadError() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastErr
}

// Path returns the model file.
func (b *ReadOnlyBackend) Path() string { return b.path }

// Pipeline returns how the model's features are made from an image (nil
// when unknown: a model learned from feature vectors only).
func (b *ReadOnlyBackend) Pipeline() *modelfile.Pipeline {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pipeline
}

// SetPipeline checks that p is the backbone the model learned with
// (modelfile.Pipeline.Check); a model that has none takes p only while
// it has learned nothing. Nothing is written.
func (b *ReadOnlyBackend) SetPipeline(p *modelfile.Pipeline) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.pipeline != nil:
		if err := b.pipeline.Check(p); err != nil {
			return fmt.Errorf("%s: %w", b.path, err)
		}
	case b.cur.Load().Version() > 0:
		return fmt.Errorf("%s was learned from feature vectors of unknown origin: it cannot take images from %s (serve it without a backbone)", b.path, p.Backbone)
	case p.Dim != b.dim:
		return fmt.Errorf("backbone %s gives %d features, the model %s wants d=%d", p.Backbone, p.Dim, b.path, b.dim)
	default:
		b.pipeline = p
	}
	return nil
}

// Config returns the model's Fly-CL configuration.
func (b *ReadOnlyBackend) Config() flycl.Config { return b.cfg }

// Current returns the view served.
func (b *ReadOnlyBackend) Current() ModelView { return b.cur.Load() }

// Learn fails with ErrReadOnly.
func (b *ReadOnlyBackend) Learn(context.Context, []float32, []string, deploy.LearnOptions) (LearnReport, ModelView, error) {
	return LearnReport{}, nil, ErrReadOnly
}

// Forget fails with ErrReadOnly.
func (b *ReadOnlyBackend) Forget(context.Context, string, []float32) (ModelView, error) {
	return nil, ErrReadOnly
}

// Undo fails with ErrReadOnly.
func (b *ReadOnlyBackend) Undo(context.Context, store.Undo) (ModelView, []store.Undone, error) {
	return nil, nil, ErrReadOnly
}

// History lists the changes the model's journal records (store.History:
// it reads only).
func (b *ReadOnlyBackend) History() ([]store.HistoryItem, error) { return store.History(b.path) }

// viewOf is the published view of a model (FileBackend's and
// ReadOnlyBackend's).
func viewOf(dm *deploy.Model, path string) *fileView {
	m := dm.Model
	cfg := m.Config()
	s := &fileView{pred: m.Predictor(), config: cfg, pipeline: dm.Pipeline,
		info: Info{Version: m.Version(), Dim: m.InputDim(), M: cfg.M, P: cfg.P, K: cfg.K,
			Lambda: m.Lambda(), Samples: m.Samples(), Classes: m.Classes().Len(), Path: path}}
	if b, err := json.Marshal(cfg); err == nil { // a loaded model's configuration is valid
		s.info.Config = b
	}
	if dm.Pipeline != nil {
		s.info.Backbone = dm.Pipeline.Backbone
	}
	for _, r := range m.History() {
		s.info.Lambdas = append(s.info.Lambdas, r.Lambda)
	}
	s.info.Lambdas = slices.Clip(s.info.Lambdas)
	s.typ, s.typOK = m.Rejection().Typicality(codec.CalibrationPool(m))
	return s
}

// followBackend makes the server publish the views a read-only backend
// loads by itself, and notes that it takes no changes.
func (s *Server) followBackend() {
	if r, ok := s.cfg.Backend.(interface{ ReadOnly() bool }); ok && r.ReadOnly() {
		s.readOnly = true
	}
	if w, ok := s.cfg.Backend.(interface{ OnChange(func(ModelView)) }); ok {
		w.OnChange(s.publish)
	}
}
