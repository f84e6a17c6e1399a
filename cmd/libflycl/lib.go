package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"sync"
	"time"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/intake"
	"github.com/flycl/flycl/app/locate"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/procmem"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/backbone/zoo"
	"github.com/flycl/flycl/vision/extract"
)

// registry maps the handles given to C to models and extractors. Ids
// are never reused, so a freed handle stays invalid.
type registry struct {
	mu         sync.Mutex
	next       uint64
	models     map[uint64]*model
	extractors map[uint64]*extractor
}

func newRegistry() *registry {
	return &registry{models: map[uint64]*model{}, extractors: map[uint64]*extractor{}}
}

// model is a model handle's state. mu orders its calls: reads (predict,
// getters, save) under RLock, changes (learn, forget, unlearn, free)
// under Lock.
type model struct {
	mu   sync.RWMutex
	dm   *deploy.Model // nil once freed
	pred *predictor    // the classifier of dm's current state
	// hist is the history of changes an unlearn reads (store.Undoable):
	// the learns with their features, forgets and unlearns, oldest first,
	// the learns' features at most modelfile.HistoryBytes.
	hist      []*modelfile.JournalEntry
	histBytes int64
}

// extractor is an image feature extractor's handle state.
type extractor struct {
	mu  sync.Mutex
	e   *extract.Extractor
	dim int
}

var errFreed = errorf(FLYCL_E_HANDLE, "libflycl: the handle was freed")

func (r *registry) add(m *model) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next++
	r.models[r.next] = m
	return r.next
}

// model returns the model of handle id.
func (r *registry) model(id uint64) (*model, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := r.models[id]
	if !ok {
		return nil, errorf(FLYCL_E_HANDLE, "libflycl: %d is not a model handle (freed, or never given)", id)
	}
	return m, nil
}

// freeModel invalidates handle id, once the calls in progress on it end.
func (r *registry) freeModel(id uint64) error {
	r.mu.Lock()
	m, ok := r.models[id]
	delete(r.models, id)
	r.mu.Unlock()
	if !ok {
		return errorf(FLYCL_E_HANDLE, "libflycl: %d is not a model handle (freed, or never given)", id)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dm, m.pred, m.hist = nil, nil, nil
	return nil
}

func (r *registry) addExtractor(e *extractor) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next++
	r.extractors[r.next] = e
	return r.next
}

func (r *registry) extractor(id uint64) (*extractor, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.extractors[id]
	if !ok {
		return nil, errorf(FLYCL_E_HANDLE, "libflycl: %d is not an extractor handle (freed, or never given)", id)
	}
	return e, nil
}

func (r *registry) freeExtractor(id uint64) error {
	r.mu.Lock()
	e, ok := r.extractors[id]
	delete(r.extractors, id)
	r.mu.Unlock()
	if !ok {
		return errorf(FLYCL_E_HANDLE, "libflycl: %d is not an extractor handle (freed, or never given)", id)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	err := e.e.Close()
	e.e = nil
	return orCode(err, FLYCL_E_BACKBONE)
}

// wrap gives a deployable model its handle state.
func wrap(dm *deploy.Model, hist []*modelfile.JournalEntry) *model {
	// one identity for all the ways the model is saved (file, bytes)
	dm.SetIdentity(modelfile.NewModelID(), time.Now().UTC())
	m := &model{dm: dm, pred: predictorOf(dm)}
	for _, e := range hist {
		m.push(e)
	}
	return m
}

// newModel creates an untrained model from a configuration in JSON.
func (r *registry) newModel(configJSON string, d int) (uint64, error) {
	cfg, err := parseConfig(configJSON)
	if err != nil {
		return 0, err
	}
	dm, err := newModel(cfg, d)
	if err != nil {
		return 0, err
	}
	return r.add(wrap(dm, nil)), nil
}

// load reads a model file as the store does (store.Load: no lock taken,
// nothing written), its journal replayed, with its journal's history of
// learns for unlearn. The handle's model is its own: the file is never
// written but by save, to a new file.
func (r *registry) load(path string) (uint64, error) {
	if _, err := os.Stat(path); err != nil {
		return 0, err
	}
	dm, err := store.Load(path)
	if err != nil {
		return 0, orCode(err, FLYCL_E_FORMAT)
	}
	hist, _ := modelfile.ReadHistory(path, dm.ID()) // no readable history: nothing to unlearn
	return r.add(wrap(dm, hist)), nil
}

// loadBytes reads a model from the bytes of a model file.
func (r *registry) loadBytes(b []byte) (uint64, error) {
	dm, err := decodeModel(b)
	if err != nil {
		return 0, err
	}
	return r.add(wrap(dm, nil)), nil
}

// decodeModel decodes a model file's bytes (FuzzLoadBytes).
func decodeModel(b []byte) (*deploy.Model, error) {
	f, err := modelfile.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, errorf(FLYCL_E_FORMAT, "libflycl: %w", err)
	}
	dm, err := deploy.FromFile(f)
	if err != nil {
		return nil, errorf(FLYCL_E_FORMAT, "libflycl: %w", err)
	}
	return dm, nil
}

// orCode gives err code when no typed error says what it is.
func orCode(err error, code int) error {
	if err != nil && statusOf(err) == FLYCL_E_FAILED {
		return &statusError{code, err}
	}
	return err
}

// read runs fn with the model under the read lock.
func (m *model) read(fn func(dm *deploy.Model, p *predictor) error) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.dm == nil {
		return errFreed
	}
	return fn(m.dm, m.pred)
}

// change runs fn with the model under the write lock, and renews the
// predictor after it.
func (m *model) change(fn func(dm *deploy.Model) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dm == nil {
		return errFreed
	}
	defer func() { m.pred = predictorOf(m.dm) }()
	return fn(m.dm)
}

// push records a change for unlearn, dropping the oldest learns' features
// beyond modelfile.HistoryBytes (as a journal keeps its history).
func (m *model) push(e *modelfile.JournalEntry) {
	m.hist = append(m.hist, e)
	if e.Op == "learn" {
		m.histBytes += int64(4 * len(e.X))
	}
	for m.histBytes > modelfile.HistoryBytes && len(m.hist) > 0 {
		if old := m.hist[0]; old.Op == "learn" {
			m.histBytes -= int64(4 * len(old.X))
		}
		m.hist[0] = nil
		m.hist = m.hist[1:]
	}
}

// save writes the model to a new model file at path through the store.
func (m *model) save(path string) error {
	return m.read(func(dm *deploy.Model, _ *predictor) error {
		if _, err := os.Lstat(path); err == nil {
			return errorf(FLYCL_E_EXISTS, "libflycl: %s exists: remove it (and its journal) first, or save under a new name", path)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		// A shallow copy: the store records the file's checkpoint on it,
		// not on the model readers share.
		c := *dm
		ctx := context.Background()
		st, err := store.Open(ctx, path, &store.Options{Create: func() (*deploy.Model, error) { return &c, nil }})
		if err != nil {
			return orCode(err, FLYCL_E_IO)
		}
		if st.Exists() {
			st.Close()
			return errorf(FLYCL_E_EXISTS, "libflycl: %s exists: remove it (and its journal) first, or save under a new name", path)
		}
		err = st.Update(ctx, func(*deploy.Model) (store.Change, error) { return store.Change{}, nil })
		if cerr := st.Close(); err == nil {
			err = cerr
		}
		return orCode(err, FLYCL_E_IO)
	})
}

// saveBytes returns the bytes of the model file save writes.
func (m *model) saveBytes() ([]byte, error) {
	var buf bytes.Buffer
	err := m.read(func(dm *deploy.Model, _ *predictor) error {
		return modelfile.Encode(&buf, fileView(dm))
	})
	return buf.Bytes(), err
}

// learn learns n samples of d features, y indexing names.
func (m *model) learn(x []float32, n, d int, y []int32, names []string, lambda float64, batch int) (float64, error) {
	if n <= 0 {
		return 0, inputError(fmt.Errorf("libflycl: learn: no samples (n=%d)", n))
	}
	if batch < 0 {
		return 0, inputError(fmt.Errorf("libflycl: learn: batch must be 0 (one task) or positive, got %d", batch))
	}
	if err := checkNames(names); err != nil {
		return 0, err
	}
	per := make([]string, n)
	for i, l := range y {
		if l < 0 || int(l) >= len(names) {
			return 0, inputError(fmt.Errorf("libflycl: learn: label %d of sample %d is not an index into the %d class names", l, i, len(names)))
		}
		per[i] = names[l]
	}
	// a task the machine cannot hold is refused before Go allocates it (an
	// allocation that fails would end the calling process)
	opt := deploy.LearnOptions{Lambda: lambda, MaxBytes: procmem.Available()}
	if batch > 0 {
		opt.Online, opt.Batch = true, batch
	}
	opt, err := opt.Check()
	if err != nil {
		return 0, inputError(err)
	}
	var out float64
	err = m.change(func(dm *deploy.Model) error {
		if err := checkInput(x, n, d, dm.Model.InputDim()); err != nil {
			return err
		}
		before := store.PriorOf(dm)
		res, err := dm.Learn(context.Background(), x, per, nil, opt)
		var partial *deploy.PartialLearnError
		if errors.As(err, &partial) {
			// online, a mini-batch failed after others were learned: they
			// are taken back out as flycl_unlearn would (the statistics
			// as before up to float32 rounding, λ and the calibration as
			// before), and the history records both, so that unlearn
			// goes on from the learns before this one
			n := partial.Learned
			m.push(store.LearnEntry(dm.Model.Version(), before, x[:n*d], per[:n], d, opt))
			u, uerr := store.UndoLast(context.Background(), dm, m.hist)
			if uerr != nil {
				return errors.Join(err, fmt.Errorf("libflycl: learn: taking back the %d samples learned before the failure: %w (flycl_unlearn takes them back)", n, uerr))
			}
			m.push(u)
		}
		if err != nil {
			return err
		}
		m.push(store.LearnEntry(dm.Model.Version(), before, x, per, d, opt))
		out = res.Lambda
		return nil
	})
	return out, err
}

// forget removes the class called name: exactly with x (its samples'
// n×d features), or from the history when it holds them all, else its
// column only.
func (m *model) forget(name string, x []float32, d int) (exact bool, err error) {
	err = m.change(func(dm *deploy.Model) error {
		if x != nil {
			if err := checkInput(x, len(x)/max(d, 1), d, dm.Model.InputDim()); err != nil {
				return err
			}
		}
		canon, count, ok := classOf(dm, name)
		if !ok {
			_, _, err := dm.Forget(context.Background(), name, nil, nil) // the typed error, naming the classes
			return err
		}
		if x == nil && count > 0 {
			if xs := store.JournalSamples(m.hist, canon, dm.Model.InputDim()); len(xs) == count*dm.Model.InputDim() {
				x = xs
			}
		}
		_, exact, err = dm.Forget(context.Background(), canon, x, nil)
		if err != nil {
			return err
		}
		m.push(store.ForgetEntry(dm.Model.Version(), canon, nil, dm.Model.InputDim()))
		return nil
	})
	return exact, err
}

// unlearn takes the last learn back out.
func (m *model) unlearn() error {
	return m.change(func(dm *deploy.Model) error {
		if len(store.Undoable(m.hist)) == 0 {
			return fmt.Errorf("%w: no learn to take back (a model keeps its learns since it was created or loaded from a file with a journal, up to the last forget; one loaded from bytes keeps none)", store.ErrNoUndo)
		}
		e, err := store.UndoLast(context.Background(), dm, m.hist)
		if err != nil {
			return err
		}
		m.push(e)
		return nil
	})
}

// checkInput checks n×d features against the model's dimension.
func checkInput(x []float32, n, d, md int) error {
	switch {
	case n < 0:
		return inputError(fmt.Errorf("libflycl: %d samples", n))
	case d != md:
		return inputError(fmt.Errorf("libflycl: features of dimension %d, the model's is %d", d, md))
	case len(x) != n*d:
		return inputError(fmt.Errorf("libflycl: %d values for %d samples of dimension %d", len(x), n, d))
	}
	return checkFinite(x, d)
}

// checkFinite refuses a feature that is NaN or infinite, naming it.
func checkFinite(x []float32, d int) error {
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return inputError(fmt.Errorf("libflycl: sample %d, feature %d is %g", i/d, i%d, v))
		}
	}
	return nil
}

// openExtractor opens an image feature extractor as `flycl learn` does:
// the backbone asked for (else the model's pipeline mp, else
// extract.DefaultBackbone), weights from modelsDir or built in, ONNX
// Runtime from ortLib or where flycl installs it.
func (r *registry) openExtractor(spec, modelsDir, ortLib string, mp *modelfile.Pipeline, trained bool) (uint64, int, error) {
	lib, err := findORT(ortLib)
	if err != nil {
		return 0, 0, err
	}
	if err := backbone.Init(lib); err != nil {
		return 0, 0, &statusError{FLYCL_E_BACKBONE, err}
	}
	o := intake.ExtractorOptions{Spec: spec, Default: extract.DefaultBackbone, Model: mp, Trained: trained,
		Open: func(s extract.BackboneSpec) (*backbone.Model, error) {
			if modelsDir != "" {
				return s.Open(os.DirFS(modelsDir), modelsDir)
			}
			return s.Open(zoo.FS(), "(built-in weights)")
		}}
	e, err := intake.ResolveExtractor(context.Background(), o)
	if err != nil {
		if errors.Is(err, intake.ErrNoPipeline) {
			return 0, 0, inputError(err)
		}
		return 0, 0, &statusError{FLYCL_E_BACKBONE, err}
	}
	dim := e.Pipeline().Dim
	return r.addExtractor(&extractor{e: e, dim: dim}), dim, nil
}

// findORT resolves the ONNX Runtime library as flycl does (package
// locate): lib when given, else $FLYCL_ORT_LIB, else where an install or
// the Python wheel keeps it relative to libflycl itself (selfPath), else
// where make ort installs it under the working folder or a folder above.
func findORT(lib string) (string, error) {
	r := locate.Resolver{Executable: selfPath()}
	if lib != "" {
		r.Flags = map[string]string{locate.FlagORTLib: lib}
	}
	p, err := r.ORTLibrary()
	if err != nil {
		return "", &statusError{FLYCL_E_BACKBONE, fmt.Errorf("libflycl: %w", err)}
	}
	return p, nil
}

// extract writes the features of image files into out (n×dim).
func (x *extractor) extract(paths []string, out []float32) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.e == nil {
		return errFreed
	}
	s, err := x.e.Files(context.Background(), paths)
	if err != nil {
		return orCode(err, FLYCL_E_BACKBONE)
	}
	if s.N != len(paths) || s.D != x.dim {
		return errorf(FLYCL_E_INTERNAL, "libflycl: extract: %d×%d features for %d images of dimension %d", s.N, s.D, len(paths), x.dim)
	}
	copy(out, s.X)
	return nil
}

// useExtractor records e's pipeline on the model.
func (m *model) useExtractor(x *extractor) error {
	x.mu.Lock()
	var p *modelfile.Pipeline
	if x.e != nil {
		p = x.e.Pipeline()
	}
	x.mu.Unlock()
	if p == nil {
		return errFreed
	}
	return m.change(func(dm *deploy.Model) error {
		if p.Dim != dm.Model.InputDim() {
			return inputError(fmt.Errorf("libflycl: the extractor makes %d-dimensional features, the model's are %d", p.Dim, dm.Model.InputDim()))
		}
		if err := dm.CheckPipeline(p); err != nil {
			return inputError(err)
		}
		if dm.Pipeline == nil {
			dm.Pipeline = p
		}
		return nil
	})
}

// Short names for the cgo file.
type (
	deployModel = deploy.Model
	pipeline    = modelfile.Pipeline
)

// ctxBackground is the context of every call: C callers cannot cancel.
var ctxBackground = context.Background()

// readPred runs fn with the model's predictor under the read lock.
func (m *model) readPred(fn func(p *predictor) error) error {
	return m.read(func(_ *deploy.Model, p *predictor) error { return fn(p) })
}
