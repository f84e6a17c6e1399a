package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
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
// forget do; each change is made on a clone, kept once saved, while the
// published snapshot, an immutable flycl.Predictor, keeps serving.
type FileBackend struct {
	path     string
	model    *deploy.Model // the model and its pipeline, as the CLI keeps them
	newModel func() (*flycl.Model, error)
	// cur is the published snapshot: written by Learn and Forget, read
	// by Current from any goroutine.
	cur atomic.Pointer[fileSnapshot]
}

// OpenFile opens the model file at path. When the file does not exist and
// create is not nil, the model starts empty (version 0) and the file is
// written at the first learn; otherwise a missing file is an error.
func OpenFile(path string, create func() (*flycl.Model, error)) (*FileBackend, error) {
	b := &FileBackend{path: path, newModel: create}
	if err := b.load(); err != nil {
		return nil, err
	}
	b.cur.Store(b.snapshot())
	return b, nil
}

// load reads the file (or creates the empty model), replacing the model
// in memory.
func (b *FileBackend) load() error {
	m, err := deploy.Load(b.path)
	switch {
	case err == nil:
		b.model = m
		return nil
	case errors.Is(err, fs.ErrNotExist) && b.newModel != nil:
		m, err := b.newModel()
		if err != nil {
			return err
		}
		b.model = &deploy.Model{Model: m}
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
		b.model.Pipeline = p
	}
	b.cur.Store(b.snapshot())
	return nil
}

// Config returns the model's Fly-CL configuration.
func (b *FileBackend) Config() flycl.Config { return b.model.Config() }

// Current returns the latest snapshot.
func (b *FileBackend) Current() Snapshot { return b.cur.Load() }

// change applies f to a clone of the model and saves the clone; only
// when both succeed does the clone become the model. A failed change
// (bad input, a failed solve, a failed save) leaves the model in memory
// as it was, which is what the file holds, with nothing to reload.
func (b *FileBackend) change(f func(m *deploy.Model) error) (save time.Duration, err error) {
	m := &deploy.Model{Model: b.model.Model.Clone(), Pipeline: b.model.Pipeline, Created: b.model.Created}
	if err := f(m); err != nil {
		return 0, err
	}
	t := time.Now()
	if err := m.Save(b.path); err != nil {
		return 0, err
	}
	b.model = m
	return time.Since(t), nil
}

// Learn learns the features x (n×d) with their class names as one task
// (GCV on it), saves the model and returns the new snapshot.
func (b *FileBackend) Learn(ctx context.Context, x []float32, names []string) (LearnReport, Snapshot, error) {
	d := b.model.InputDim()
	if len(x) == 0 || len(x)%d != 0 || len(x)/d != len(names) {
		return LearnReport{}, nil, &InputError{fmt.Errorf("%d feature values for %d labels and d=%d", len(x), len(names), d)}
	}
	var res *deploy.LearnResult
	save, err := b.change(func(m *deploy.Model) error {
		var err error
		if res, err = m.Learn(ctx, x, names, nil, deploy.LearnOptions{}); err != nil {
			return &InputError{err}
		}
		return nil
	})
	if err != nil {
		return LearnReport{}, nil, err
	}
	stages := map[string]time.Duration{"save": save}
	for _, s := range flycl.AllStages() {
		stages[s.String()] = res.Stages.Get(s)
	}
	rep := LearnReport{Samples: res.Samples, NewClasses: res.Added, Lambda: res.Lambda, Stages: stages}
	sn := b.snapshot()
	b.cur.Store(sn)
	return rep, sn, nil
}

// Forget removes a class. With x (its n×d features) the removal is
// exact: the model equals one that never saw the class. Without, the
// class's column is dropped but G still holds its samples.
func (b *FileBackend) Forget(ctx context.Context, class string, x []float32) (Snapshot, error) {
	if _, ok := b.model.LabelOf(class); !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownClass, class)
	}
	if len(x) == 0 {
		x = nil // no data: drop the column
	}
	_, err := b.change(func(m *deploy.Model) error {
		if _, _, err := m.Forget(ctx, class, x, nil); err != nil {
			return &InputError{err}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sn := b.snapshot()
	b.cur.Store(sn)
	return sn, nil
}

func (b *FileBackend) snapshot() *fileSnapshot {
	m := b.model.Model
	cfg := m.Config()
	s := &fileSnapshot{pred: m.Predictor(),
		info: Info{Version: m.Version(), Dim: m.InputDim(), M: cfg.M, P: cfg.P, K: cfg.K,
			Lambda: m.Lambda(), Samples: m.Samples(), Classes: len(m.Classes()), Path: b.path}}
	if b.model.Pipeline != nil {
		s.info.Backbone = b.model.Pipeline.Backbone
	}
	for _, r := range m.History() {
		s.info.Lambdas = append(s.info.Lambdas, r.Lambda)
	}
	return s
}

// fileSnapshot is a published model: an immutable flycl.Predictor.
type fileSnapshot struct {
	pred *flycl.Predictor
	info Info
}

func (s *fileSnapshot) Version() uint64 { return s.pred.Version() }
func (s *fileSnapshot) Dim() int        { return s.pred.InputDim() }
func (s *fileSnapshot) Info() Info      { i := s.info; i.Lambdas = slices.Clone(i.Lambdas); return i }
func (s *fileSnapshot) Classes() []Class {
	names, counts := s.pred.ClassNames(), s.pred.ClassCounts()
	out := make([]Class, len(names))
	for i, n := range names {
		out[i] = Class{Name: n, Samples: counts[i]}
	}
	return out
}

// Rank ranks with flycl.Predictor.Rank, as the CLI's predict does.
func (s *fileSnapshot) Rank(scores []float32, top int) [][]Score {
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

func (s *fileSnapshot) Scores(ctx context.Context, x []float32) ([]float32, error) {
	if len(s.pred.Classes()) == 0 {
		return nil, ErrNotTrained
	}
	if len(x)%s.pred.InputDim() != 0 {
		return nil, &InputError{fmt.Errorf("%d feature values are not a multiple of d=%d", len(x), s.pred.InputDim())}
	}
	sc, err := s.pred.Scores(ctx, x)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, &InputError{err}
	}
	return sc, nil
}
