package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/atomicfile"
	"github.com/flycl/flycl/linalg"
	"github.com/flycl/flycl/modelfile"
	"github.com/flycl/flycl/projection"
)

// FileBackend serves a Fly-CL model kept in a model file: it loads the
// file when opened and saves it atomically (temporary file, fsync,
// rename) after every change, before the change is acknowledged.
type FileBackend struct {
	path     string
	backbone string
	model    *flycl.Model // nil until the first learn of a new model
	newModel func() (*flycl.Model, error)
	names    []string // label i <-> names[i]
	cur      Snapshot
}

// OpenFile opens the model at path. When the file does not exist and
// create is not nil, the model starts empty and create builds it at the
// first learn; otherwise a missing file is an error. backbone names the
// feature extractor, for information.
func OpenFile(path, backbone string, create func() (*flycl.Model, error)) (*FileBackend, error) {
	b := &FileBackend{path: path, backbone: backbone, newModel: create}
	m, err := modelfile.Load(path)
	switch {
	case err == nil:
		b.model = m
		if b.names, err = loadNames(namesPath(path), len(m.Classes())); err != nil {
			return nil, err
		}
	case errors.Is(err, fs.ErrNotExist) && create != nil:
		m, err := create()
		if err != nil {
			return nil, err
		}
		b.model = m
	default:
		return nil, err
	}
	b.cur = b.snapshot()
	return b, nil
}

// Current returns the latest snapshot.
func (b *FileBackend) Current() Snapshot { return b.cur }

// Learn learns the features x (n×d) with their class names as one task,
// saves the model and returns the new snapshot.
func (b *FileBackend) Learn(ctx context.Context, x []float32, labels []string) (LearnReport, Snapshot, error) {
	d := b.model.InputDim()
	if len(x) == 0 || len(x)%d != 0 || len(x)/d != len(labels) {
		return LearnReport{}, nil, &InputError{fmt.Errorf("%d feature values for %d labels and d=%d", len(x), len(labels), d)}
	}
	index := make(map[string]int, len(b.names))
	for i, n := range b.names {
		index[n] = i
	}
	names := slices.Clone(b.names)
	var fresh []string
	ints := make([]int, len(labels))
	for i, l := range labels {
		k, ok := index[l]
		if !ok {
			k = len(names)
			index[l] = k
			names = append(names, l)
			fresh = append(fresh, l)
		}
		ints[i] = k
	}
	rec, err := b.model.LearnTask(ctx, x, ints)
	if err != nil {
		return LearnReport{}, nil, &InputError{err}
	}
	t := time.Now()
	err = saveNames(namesPath(b.path), names)
	if err == nil {
		err = modelfile.Save(b.path, b.model)
	}
	if err != nil {
		// The model in memory is ahead of the file: go back to the file.
		if m, lerr := modelfile.Load(b.path); lerr == nil {
			b.model = m
		} else if mm, cerr := b.newModel(); errors.Is(lerr, fs.ErrNotExist) && cerr == nil {
			b.model = mm
		}
		return LearnReport{}, nil, fmt.Errorf("save %s: %w", b.path, err)
	}
	b.names = names
	st := rec.Stages
	rep := LearnReport{Samples: rec.Samples, NewClasses: fresh, Lambda: rec.Lambda, Stages: map[string]time.Duration{
		"projection": st.Projection, "topk": st.TopK, "gram": st.Gram, "gcv": st.GCV,
		"factor": st.Factor, "solve": st.Solve, "save": time.Since(t),
	}}
	b.cur = b.snapshot()
	return rep, b.cur, nil
}

// Forget is not supported by this backend yet.
func (b *FileBackend) Forget(ctx context.Context, class string) (Snapshot, error) {
	if !slices.Contains(b.names, class) {
		return nil, fmt.Errorf("%w %q", ErrUnknownClass, class)
	}
	return nil, ErrUnsupported
}

func (b *FileBackend) snapshot() *fileSnapshot {
	st := b.model.State()
	s := &fileSnapshot{
		version: uint64(len(st.History)), cfg: st.Config, d: st.InputDim, w: b.model.Projection(),
		coef: st.Coef, names: slices.Clone(b.names),
		info: Info{Version: uint64(len(st.History)), Dim: st.InputDim, M: st.Config.M, P: st.Config.P, K: st.Config.K,
			Lambda: st.Lambda, Samples: b.model.Samples(), Classes: len(st.Labels), Backbone: b.backbone, Path: b.path},
	}
	for _, r := range st.History {
		s.info.Lambdas = append(s.info.Lambdas, r.Lambda)
	}
	return s
}

// fileSnapshot is a read-only copy of what prediction needs: W (never
// modified), the configuration and the classifier.
type fileSnapshot struct {
	version uint64
	cfg     flycl.Config
	d       int
	w       *projection.Matrix
	coef    []float32
	names   []string
	info    Info
}

func (s *fileSnapshot) Version() uint64 { return s.version }
func (s *fileSnapshot) Dim() int        { return s.d }
func (s *fileSnapshot) Info() Info      { i := s.info; i.Lambdas = slices.Clone(i.Lambdas); return i }
func (s *fileSnapshot) Classes() []Class {
	out := make([]Class, len(s.names))
	for i, n := range s.names {
		out[i] = Class{Name: n}
	}
	return out
}

func (s *fileSnapshot) Scores(ctx context.Context, x []float32) ([]float32, error) {
	if s.coef == nil {
		return nil, ErrNotTrained
	}
	if len(x)%s.d != 0 {
		return nil, &InputError{fmt.Errorf("%d feature values are not a multiple of d=%d", len(x), s.d)}
	}
	n, m, nc := len(x)/s.d, s.cfg.M, len(s.names)
	out := make([]float32, n*nc)
	const chunk = 256
	h := make([]float32, min(n, chunk)*m)
	for lo := 0; lo < n; lo += chunk {
		hi := min(n, lo+chunk)
		hh := h[:(hi-lo)*m]
		if err := s.w.Apply(ctx, s.cfg.Projection, x[lo*s.d:hi*s.d], hi-lo, hh); err != nil {
			return nil, &InputError{err}
		}
		projection.TopK(hh, hi-lo, m, s.cfg.K, s.cfg.TopK)
		linalg.Sgemm(false, true, hi-lo, nc, m, 1, hh, m, s.coef, m, 0, out[lo*nc:hi*nc], nc)
	}
	return out, nil
}

// namesPath is where the class names of the model at path are kept until
// the model file itself carries them.
func namesPath(path string) string { return path + ".names.json" }

func loadNames(path string, n int) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read class names: %w", err)
	}
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(names) < n {
		return nil, fmt.Errorf("read %s: %d names for %d classes", path, len(names), n)
	}
	return names[:n], nil
}

func saveNames(path string, names []string) error {
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	if err := json.NewEncoder(f).Encode(names); err != nil {
		f.Abort()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}
