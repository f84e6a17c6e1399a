package backbone

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/flycl/flycl/vision/backbone/zoo"
)

// TestLoadNPYFS reads NumPy's own file (format/npz/testdata/f32_2x3.npy, written
// by np.save of arange(6).reshape(2, 3)/4 - 0.5) from an in-memory file
// system, and reads the same as LoadNPYDir from a folder holding it.
func TestLoadNPYFS(t *testing.T) {
	b, err := os.ReadFile("../../format/npz/testdata/f32_2x3.npy")
	if err != nil {
		t.Fatal(err)
	}
	mem := fstest.MapFS{"conv_w.npy": {Data: b}, "notes.txt": {Data: []byte("not a tensor")}}
	w, err := LoadNPYFS(mem, "mem")
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{-0.5, -0.25, 0, 0.25, 0.5, 0.75}
	tn, err := w.Get("conv_w", 2, 3)
	if err != nil || !slices.Equal(tn.Data, want) || len(w.Tensors) != 1 || w.Source != "mem" {
		t.Fatalf("got %v %v (%d tensors, source %q), want shape [2 3] %v", tn.Shape, tn.Data, len(w.Tensors), w.Source, want)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "conv_w.npy"), b, 0o644)
	d, err := LoadNPYDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Tensors["conv_w"]; !slices.Equal(got.Data, want) || !slices.Equal(got.Shape, []int64{2, 3}) || d.Source != dir {
		t.Fatalf("LoadNPYDir: %v %v source %q", got.Shape, got.Data, d.Source)
	}
}

// TestLoadNPYFSErrors: a missing folder is fs.ErrNotExist, an empty one
// and a corrupt file are errors naming the source (and the file).
func TestLoadNPYFSErrors(t *testing.T) {
	root := fstest.MapFS{"w/bad.npy": {Data: []byte("\x93NUMPY garbage")}, "empty/x.txt": {}}
	sub := func(name string) fs.FS { f, _ := fs.Sub(root, name); return f }
	if _, err := LoadNPYFS(sub("missing"), "m/missing"); !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "m/missing: ") {
		t.Errorf("missing folder: %v", err)
	}
	if _, err := LoadNPYFS(sub("empty"), "m/empty"); err == nil || err.Error() != "m/empty: no .npy files" {
		t.Errorf("empty folder: %v", err)
	}
	if _, err := LoadNPYFS(sub("w"), "m/w"); err == nil || !strings.HasPrefix(err.Error(), "m/w/bad.npy: ") {
		t.Errorf("corrupt file: %v", err)
	}
	if _, err := LoadNPYDir(filepath.Join(t.TempDir(), "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing directory: %v", err)
	}
}

// TestShippedBackbonesBuild: the weights package zoo ships build both
// backbones through LoadNPYFS (the shapes every layer's builder checks),
// with the feature sizes of models/README.md: 1280 and 512 (+1000 logits).
func TestShippedBackbonesBuild(t *testing.T) {
	for _, c := range []struct {
		dir   string
		build func(*Weights, ...Option) (*Model, error)
		dims  []int
	}{{zoo.MobileNetV2, MobileNetV2, []int{1280}}, {zoo.SqueezeNet, SqueezeNet, []int{512, 1000}}} {
		sub, err := fs.Sub(zoo.FS(), c.dir)
		if err != nil {
			t.Fatal(err)
		}
		w, err := LoadNPYFS(sub, c.dir)
		if err != nil {
			t.Fatal(err)
		}
		m, err := c.build(w)
		if err != nil {
			t.Fatalf("%s: %v", c.dir, err)
		}
		if !slices.Equal(m.Dims, c.dims) {
			t.Errorf("%s: dims %v, want %v", c.dir, m.Dims, c.dims)
		}
	}
}
