package backbone

import (
	"bufio"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"

	"github.com/flycl/flycl/npz"
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

// LoadNPYDir reads every <name>.npy file of dir (float32).
func LoadNPYDir(dir string) (*Weights, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.npy"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no .npy files", dir)
	}
	slices.Sort(files)
	w := &Weights{Source: dir, Tensors: map[string]Tensor{}}
	for _, f := range files {
		t, err := readNPY(f)
		if err != nil {
			return nil, err
		}
		name := filepath.Base(f)
		w.Tensors[name[:len(name)-4]] = t
	}
	return w, nil
}

func readNPY(path string) (Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return Tensor{}, err
	}
	defer f.Close()
	data, shape, err := npz.ReadFloat32NPY(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return Tensor{}, fmt.Errorf("%s: %w", path, err)
	}
	t := Tensor{Data: data}
	for _, d := range shape {
		t.Shape = append(t.Shape, int64(d))
	}
	return t, nil
}
