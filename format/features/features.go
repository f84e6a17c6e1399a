package features

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"

	"github.com/flycl/flycl/format/npz"
)

// Set is the content of one feature file.
type Set struct {
	X          []float32 // N×D, row-major
	N, D       int
	Labels     []int
	Paths      []string // nil or N entries
	ClassNames []string // nil, or indexed by label
	// ExtractSeconds is the time spent extracting the features (0 if unknown).
	ExtractSeconds float64
	// Pipeline identifies what made the features (flycl extract records
	// the backbone, its weights hash, output, transform, precision and
	// calibration, as JSON: modelfile.Pipeline); opaque here. Empty when
	// unknown (files from before it was recorded, or from elsewhere).
	Pipeline string
}

// MaxPipelineLen bounds the pipeline identity of a feature file, in bytes
// (its JSON is a few hundred bytes, or some kilobytes with an int8
// calibration). The file stores it as a NumPy string (4 bytes a
// character), so its member may take 4 times as much, plus the .npy header.
const MaxPipelineLen = 1 << 20

// Row returns sample i's feature vector (shared, not a copy).
func (s *Set) Row(i int) []float32 { return s.X[i*s.D : (i+1)*s.D] }

// Validate checks the shapes and that every feature is finite.
func (s *Set) Validate() error {
	if s.N <= 0 || s.D <= 0 {
		return fmt.Errorf("features: empty set (%d samples × %d dims)", s.N, s.D)
	}
	if n, err := npz.Count([]int{s.N, s.D}); err != nil || len(s.X) != n {
		return fmt.Errorf("features: %d values for %d×%d", len(s.X), s.N, s.D)
	}
	if len(s.Labels) != s.N {
		return fmt.Errorf("features: %d labels for %d samples", len(s.Labels), s.N)
	}
	if s.Paths != nil && len(s.Paths) != s.N {
		return fmt.Errorf("features: %d paths for %d samples", len(s.Paths), s.N)
	}
	if len(s.Pipeline) > MaxPipelineLen {
		return fmt.Errorf("features: pipeline identity of %d bytes, more than %d", len(s.Pipeline), MaxPipelineLen)
	}
	for i, v := range s.X {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("features: sample %d, dimension %d is %v", i/s.D, i%s.D, v)
		}
	}
	for i, l := range s.Labels {
		if l < 0 {
			return fmt.Errorf("features: sample %d has negative label %d", i, l)
		}
		if s.ClassNames != nil && l >= len(s.ClassNames) {
			return fmt.Errorf("features: sample %d has label %d but only %d class names", i, l, len(s.ClassNames))
		}
	}
	return nil
}

// Classes returns the distinct labels, ascending.
func (s *Set) Classes() []int {
	c := slices.Clone(s.Labels)
	slices.Sort(c)
	return slices.Compact(c)
}

// Subset returns the samples whose label is in classes, in file order,
// with their indices in s.
func (s *Set) Subset(classes []int) (x []float32, labels []int, idx []int) {
	want := make(map[int]bool, len(classes))
	for _, c := range classes {
		want[c] = true
	}
	for i, l := range s.Labels {
		if want[l] {
			x = append(x, s.Row(i)...)
			labels = append(labels, l)
			idx = append(idx, i)
		}
	}
	return x, labels, idx
}

// FirstPerClass returns a set with only the first n samples (in file
// order) of every class; extraction time is scaled by the fraction kept.
// With n <= 0 it returns s itself (every sample).
func (s *Set) FirstPerClass(n int) *Set {
	if n <= 0 {
		return s
	}
	count := map[int]int{}
	out := &Set{D: s.D, ClassNames: s.ClassNames}
	for i, l := range s.Labels {
		if count[l] >= n {
			continue
		}
		count[l]++
		out.X = append(out.X, s.Row(i)...)
		out.Labels = append(out.Labels, l)
		if s.Paths != nil {
			out.Paths = append(out.Paths, s.Paths[i])
		}
		out.N++
	}
	if s.N > 0 {
		out.ExtractSeconds = s.ExtractSeconds * float64(out.N) / float64(s.N)
	}
	return out
}

// Load reads and validates a feature file. Errors name the file and the
// array at fault.
func Load(path string) (*Set, error) {
	r, err := npz.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil, fmt.Errorf("read features: %w", err)
		}
		return nil, &InvalidError{fmt.Errorf("read features: %w", err)}
	}
	defer r.Close()
	s, err := read(r, path)
	if err != nil {
		return nil, &InvalidError{err}
	}
	return s, nil
}

// InvalidError is the error of Load and Read for a file that is not a
// valid feature file: not an .npz archive, arrays of the wrong shape or
// type, a NaN or infinite feature, a label that is not a class index.
// Its message names the file and the array or sample at fault. It is
// input refused (its BadInput method: flycl.IsInput reports true), as
// opposed to a file that cannot be read.
type InvalidError struct{ Err error }

func (e *InvalidError) Error() string { return e.Err.Error() }
func (e *InvalidError) Unwrap() error { return e.Err }

// BadInput reports that the error is the input's (flycl.IsInput).
func (e *InvalidError) BadInput() bool { return true }

// Read reads and validates a feature file of size bytes from ra; name is
// used in error messages.
func Read(ra io.ReaderAt, size int64, name string) (*Set, error) {
	r, err := npz.NewReader(ra, size, name)
	if err != nil {
		return nil, &InvalidError{fmt.Errorf("read features: %w", err)}
	}
	s, err := read(r, name)
	if err != nil {
		return nil, &InvalidError{err}
	}
	return s, nil
}

func read(r *npz.Reader, path string) (*Set, error) {
	x, shape, err := r.Float32("features")
	if err != nil {
		return nil, fmt.Errorf("read features: %w", err)
	}
	if len(shape) != 2 {
		return nil, fmt.Errorf("read features: %s: array \"features\" has shape %v, want (N, d)", path, shape)
	}
	if n, err := npz.Count(shape); err != nil || n != len(x) {
		return nil, fmt.Errorf("read features: %s: array \"features\" has shape %v but %d values", path, shape, len(x))
	}
	lab, lshape, err := r.Int64("labels")
	if err != nil {
		return nil, fmt.Errorf("read features: %w", err)
	}
	if len(lshape) != 1 || lshape[0] != shape[0] {
		return nil, fmt.Errorf("read features: %s: \"labels\" has shape %v, want (%d,) to match \"features\"", path, lshape, shape[0])
	}
	s := &Set{X: x, N: shape[0], D: shape[1], Labels: make([]int, len(lab))}
	for i, v := range lab {
		if v < 0 || v > math.MaxInt32 {
			return nil, fmt.Errorf("read features: %s: labels[%d] = %d is not a class index", path, i, v)
		}
		s.Labels[i] = int(v)
	}
	if r.Has("paths") {
		if s.Paths, _, err = r.Strings("paths"); err != nil {
			return nil, fmt.Errorf("read features: %w", err)
		}
	}
	if r.Has("class_names") {
		if s.ClassNames, _, err = r.Strings("class_names"); err != nil {
			return nil, fmt.Errorf("read features: %w", err)
		}
	}
	if r.Has("pipeline") {
		size, err := r.MemberSize("pipeline")
		if err != nil {
			return nil, fmt.Errorf("read features: %w", err)
		}
		if size > 4*MaxPipelineLen+4096 {
			return nil, fmt.Errorf("read features: %s: array \"pipeline\" is %d bytes, more than a pipeline identity of at most %d bytes takes", path, size, MaxPipelineLen)
		}
		p, shape, err := r.Strings("pipeline")
		if err != nil {
			return nil, fmt.Errorf("read features: %w", err)
		}
		if len(p) != 1 || len(shape) > 1 {
			return nil, fmt.Errorf("read features: %s: array \"pipeline\" has shape %v, want one string", path, shape)
		}
		if p[0] == "" {
			return nil, fmt.Errorf("read features: %s: array \"pipeline\" is empty", path)
		}
		s.Pipeline = p[0]
	}
	if r.Has("extract_seconds") {
		v, _, err := r.Float32("extract_seconds")
		if err != nil {
			return nil, fmt.Errorf("read features: %w", err)
		}
		if len(v) == 1 {
			s.ExtractSeconds = float64(v[0])
		}
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("read features: %s: %w", path, err)
	}
	return s, nil
}

// Save writes s to path atomically.
func Save(path string, s *Set) error {
	if err := s.Validate(); err != nil {
		return fmt.Errorf("write features %s: %w", path, err)
	}
	w, err := npz.Create(path)
	if err != nil {
		return err
	}
	w.Float32("features", s.X, s.N, s.D)
	lab := make([]int64, len(s.Labels))
	for i, l := range s.Labels {
		lab[i] = int64(l)
	}
	w.Int64("labels", lab)
	if s.Paths != nil {
		w.Strings("paths", s.Paths)
	}
	if s.ClassNames != nil {
		w.Strings("class_names", s.ClassNames)
	}
	if s.ExtractSeconds > 0 {
		w.Float32("extract_seconds", []float32{float32(s.ExtractSeconds)})
	}
	if s.Pipeline != "" {
		w.Strings("pipeline", []string{s.Pipeline})
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("write features %s: %w", path, err)
	}
	return nil
}
