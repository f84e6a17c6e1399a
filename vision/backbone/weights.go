package backbone

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/bits"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/flycl/flycl/format/npz"
)

// Tensor is a named float32 array with its shape.
type Tensor struct {
	Shape []int64
	Data  []float32
}

// Weights maps checkpoint names to tensors.
type Weights struct {
	Source  string
	Tensors map[string]Tensor
}

// Get returns tensor name with the given shape (-1 matches any size),
// or an error naming the checkpoint, the tensor and the shapes.
func (w *Weights) Get(name string, shape ...int64) (Tensor, error) {
	t, ok := w.Tensors[name]
	if !ok {
		return Tensor{}, fmt.Errorf("%s: missing tensor %q", w.Source, name)
	}
	if len(shape) > 0 {
		bad := len(shape) != len(t.Shape)
		for i := 0; !bad && i < len(shape); i++ {
			bad = shape[i] >= 0 && shape[i] != t.Shape[i]
		}
		if bad {
			return Tensor{}, fmt.Errorf("%s: tensor %q has shape %v, want %v", w.Source, name, t.Shape, shape)
		}
	}
	if n, err := checkedNumel(t.Shape); err != nil || int64(len(t.Data)) != n {
		return Tensor{}, fmt.Errorf("%s: tensor %q has %d values for shape %v", w.Source, name, len(t.Data), t.Shape)
	}
	return t, nil
}

// numel returns the element count of a shape known to be valid (one
// Get has checked, or one built here).
func numel(s []int64) int64 {
	n, _ := checkedNumel(s)
	return n
}

// checkedNumel returns the element count of shape, or an error if a
// dimension is negative or the product overflows.
func checkedNumel(s []int64) (int64, error) {
	n := uint64(1)
	for _, d := range s {
		if d < 0 {
			return 0, fmt.Errorf("shape %v has a negative dimension", s)
		}
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, fmt.Errorf("shape %v: element count overflows", s)
		}
		n = lo
	}
	return int64(n), nil
}

// LoadNPYDir reads every <name>.npy file of the folder dir (float32); the
// tensors are named after the files, without ".npy".
func LoadNPYDir(dir string) (*Weights, error) {
	return LoadNPYFS(os.DirFS(dir), dir)
}

// LoadNPYFS reads every <name>.npy file at the root of fsys (float32), as
// LoadNPYDir does for a folder: use fs.Sub for a sub-folder, for example
// of the weights package zoo ships. source names fsys in the Weights and
// in errors (a file is named source/<name>.npy). The tensors, and so the
// weights digest of a backbone built from them, depend on the files'
// names and contents only, not on where they were read from.
func LoadNPYFS(fsys fs.FS, source string) (*Weights, error) {
	files, err := fs.Glob(fsys, "*.npy")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if len(files) == 0 {
		if _, err := fs.Stat(fsys, "."); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				err = fs.ErrNotExist // not "stat .: ..."
			}
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		return nil, fmt.Errorf("%s: no .npy files", source)
	}
	slices.Sort(files)
	w := &Weights{Source: source, Tensors: map[string]Tensor{}}
	for _, f := range files {
		t, err := readNPY(fsys, f, path.Join(source, f))
		if err != nil {
			return nil, err
		}
		w.Tensors[strings.TrimSuffix(f, ".npy")] = t
	}
	return w, nil
}

// readNPY reads the float32 .npy file name of fsys; shown names it in errors.
func readNPY(fsys fs.FS, name, shown string) (Tensor, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return Tensor{}, fmt.Errorf("%s: %w", shown, err)
	}
	defer f.Close()
	data, shape, err := npz.ReadFloat32NPY(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return Tensor{}, fmt.Errorf("%s: %w", shown, err)
	}
	t := Tensor{Data: data}
	for _, d := range shape {
		t.Shape = append(t.Shape, int64(d))
	}
	return t, nil
}
