package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/vision/imageio"
)

// Reloading is a Classifier whose model can be replaced while Run uses
// it (a FileWatcher replaces it when the model file changes). The
// replacement is one atomic pointer swap: a frame, all its zones
// included, is classified by the model before it or the one after it,
// never a mix (Run pins the current classifier at each frame's start,
// once for all the zones that share it; a zone with a Reloading of its
// own reloads on its own).
type Reloading struct {
	cur atomic.Pointer[ModelClassifier]
}

// NewReloading returns a Reloading that starts with c.
func NewReloading(c *ModelClassifier) *Reloading {
	r := &Reloading{}
	r.cur.Store(c)
	return r
}

// Current returns the classifier now in use.
func (r *Reloading) Current() *ModelClassifier { return r.cur.Load() }

// Swap makes c the classifier of the frames that start from now on, and
// returns the one it replaces.
func (r *Reloading) Swap(c *ModelClassifier) *ModelClassifier { return r.cur.Swap(c) }

// Classify implements Classifier with the current classifier.
func (r *Reloading) Classify(ctx context.Context, img *imageio.RGB) (Prediction, error) {
	return r.Current().Classify(ctx, img)
}

// ClassifyFeatures implements FeatureClassifier with the current
// classifier.
func (r *Reloading) ClassifyFeatures(ctx context.Context, img *imageio.RGB) (Prediction, []float32, error) {
	return r.Current().ClassifyFeatures(ctx, img)
}

// Pin implements Pinner.
func (r *Reloading) Pin() Classifier { return r.Current() }

// Pinner is a Classifier whose model may change while Run uses it: Run
// calls Pin at the start of each frame and classifies the frame (every
// zone of it) with what Pin returned.
type Pinner interface {
	Classifier
	Pin() Classifier
}

// FileWatcher puts each new version of a model file into a Reloading: it
// polls the identity (device, inode, size, modification time) of the file
// and of its journal every Interval and, when either changed, loads the
// model (its journal's changes replayed, as flycl watch loaded it at the
// start) and swaps it in when its version differs.
//
// Polling the files' identity costs two stat calls per poll, whatever
// the model's size, and notices every change a writer makes: a learn
// through flycl serve (appended to the journal, the file rewritten at a
// checkpoint), flycl learn, undo or a copy over the file (a new inode).
// The version itself is inside the file, so reading it would mean
// opening and parsing the file at every poll; file-system notifications
// (inotify) are not delivered for changes made on another machine of a
// network file system or through some container bind mounts.
//
// A version that cannot be loaded (a journal being appended to is read
// up to its last whole entry; a file that is not a model, or whose
// backbone differs from the running one) is logged and skipped: the
// running model goes on answering, and the next change is tried again.
type FileWatcher struct {
	Path string
	// Interval between two polls (≤ 0: DefaultReloadInterval).
	Interval time.Duration
	// Into receives the new classifiers.
	Into *Reloading
	// Unknown is the rejection choice for a new version (ParseRejection:
	// "auto" takes each version's own calibrated rejection, "off", a
	// threshold, or keep:SHARE, taken again from each version's pool).
	Unknown string
	// Pipeline is what the running extractor computes: a version that
	// needs another backbone or transform is refused (nil: not checked).
	Pipeline *modelfile.Pipeline
	// Log receives a line per reload and per refused version (nil:
	// slog.Default()).
	Log *slog.Logger

	reloads, failures atomic.Int64
}

// DefaultReloadInterval is FileWatcher.Interval's default.
const DefaultReloadInterval = 2 * time.Second

// Reloads returns how many versions were swapped in, and how many
// changes could not be loaded.
func (w *FileWatcher) Reloads() (reloads, failures int) {
	return int(w.reloads.Load()), int(w.failures.Load())
}

// ident is the identity of the model file and of its journal (zero when
// it does not exist).
type ident struct{ file, journal modelfile.Ident }

func (w *FileWatcher) ident() (ident, error) {
	f, err := modelfile.IdentOf(w.Path)
	if err != nil {
		return ident{}, err
	}
	j, err := modelfile.IdentOf(modelfile.JournalPath(w.Path))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ident{}, err
	}
	return ident{f, j}, nil
}

func (i ident) same(o ident) bool { return i.file.Same(o.file) && i.journal.Same(o.journal) }

// Run polls until ctx ends (it returns nil then).
func (w *FileWatcher) Run(ctx context.Context) error {
	log := w.Log
	if log == nil {
		log = slog.Default()
	}
	every := w.Interval
	if every <= 0 {
		every = DefaultReloadInterval
	}
	last, err := w.ident()
	if err != nil {
		log.Warn("watching the model file", "path", w.Path, "err", err)
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	var failed ident // the identity of the last change that could not be loaded
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		now, err := w.ident()
		if err != nil || now.same(last) || (!failed.file.IsZero() && now.same(failed)) {
			continue
		}
		c, err := w.load()
		if err != nil {
			w.failures.Add(1)
			failed = now
			log.Warn("a new version of the model file cannot be used; the running model goes on", "path", w.Path, "err", err)
			continue
		}
		last, failed = now, ident{}
		old := w.Into.Current()
		if c.Predictor.Version() == old.Predictor.Version() {
			continue
		}
		w.Into.Swap(c)
		w.reloads.Add(1)
		log.Info("model reloaded", "path", w.Path, "version", c.Predictor.Version(), "previous", old.Predictor.Version(), "classes", c.Predictor.Classes().Len())
	}
}

// Start runs w in a goroutine of its own until stop is called; stop
// waits for it to end and returns its Reloads. It is how a command
// follows a model file while watch.Run classifies with w.Into.
func (w *FileWatcher) Start(ctx context.Context) (stop func() (reloads, failures int)) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	return func() (int, int) {
		cancel()
		<-done
		return w.Reloads()
	}
}

// load reads the model file as it is now into a classifier with the
// running one's extractor and settings.
func (w *FileWatcher) load() (*ModelClassifier, error) {
	f, err := store.LoadFile(w.Path)
	if err != nil {
		return nil, err
	}
	p := f.Snapshot.Predictor()
	if p.Classes().Len() == 0 {
		return nil, fmt.Errorf("%s has no classes", w.Path)
	}
	if w.Pipeline != nil && f.Pipeline != nil {
		if err := f.Pipeline.Check(w.Pipeline); err != nil {
			return nil, fmt.Errorf("%s: %w (restart flycl watch to use it)", w.Path, err)
		}
	}
	cur := w.Into.Current()
	if p.InputDim() != cur.Predictor.InputDim() {
		return nil, fmt.Errorf("%s takes %d features, the running extractor gives %d", w.Path, p.InputDim(), cur.Predictor.InputDim())
	}
	rej, err := ParseRejection(w.Unknown, p.Rejection(), f.Snapshot.State().CalibrationPool)
	if err != nil {
		return nil, err
	}
	return &ModelClassifier{Extractor: cur.Extractor, Predictor: p, Rejection: rej, Top: cur.Top}, nil
}
