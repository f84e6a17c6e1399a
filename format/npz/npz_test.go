package npz

import (
	"archive/zip"
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Fixtures in testdata were written by NumPy 1.24 (testdata/gen.py).

func TestReadNumPyArrays(t *testing.T) {
	r, err := Open("testdata/mixed.npz")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f32, shape, err := r.Float32("f32")
	if err != nil || !slices.Equal(shape, []int{2, 3}) || !slices.Equal(f32, []float32{-0.5, -0.25, 0, 0.25, 0.5, 0.75}) {
		t.Errorf("f32: %v %v %v", f32, shape, err)
	}
	for name, want := range map[string][]float32{
		"f64": {1.5, -2.25, float32(math.Inf(1))}, "f16": {0.5, -1, 2}, "i64": {-3, 0, 7, 1 << 40},
		"u8": {0, 255}, "b": {1, 0, 1},
	} {
		got, _, err := r.Float32(name)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s as float32: %v %v, want %v", name, got, err, want)
		}
	}
	for name, want := range map[string][]int64{
		"i64": {-3, 0, 7, 1 << 40}, "i32": {1, 2, 3, 4}, "u8": {0, 255}, "whole": {1, 2, -3},
	} {
		got, _, err := r.Int64(name)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s as int64: %v %v, want %v", name, got, err, want)
		}
	}
	if _, _, err := r.Int64("frac"); err == nil || !strings.Contains(err.Error(), "not an integer") {
		t.Errorf("frac as int64: %v", err)
	}
	paths, _, err := r.Strings("paths")
	if err != nil || !slices.Equal(paths, []string{"train/a/1.jpg", "über/ß.png", ""}) {
		t.Errorf("paths: %q %v", paths, err)
	}
	if _, _, err := r.Float32("paths"); err == nil {
		t.Error("strings as float32: no error")
	}
	// np.asfortranarray(np.arange(6).reshape(2, 3)) reads back in C order
	if f, shape, err := r.Float32("fortran"); err != nil || !slices.Equal(f, []float32{0, 1, 2, 3, 4, 5}) || !slices.Equal(shape, []int{2, 3}) {
		t.Errorf("fortran: %v %v %v", f, shape, err)
	}
	if _, _, err := r.Float32("missing"); err == nil || !strings.Contains(err.Error(), "no array \"missing\"") {
		t.Errorf("missing: %v", err)
	}
	if !r.Has("f32") || r.Has("nope") {
		t.Error("Has")
	}
}

func TestCorruptArchives(t *testing.T) {
	if _, err := Open("testdata/truncated.npz"); err == nil || !strings.Contains(err.Error(), "truncated.npz") {
		t.Errorf("truncated archive: %v", err)
	}
	r, err := Open("testdata/shortmember.npz")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, _, err := r.Float32("x"); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("short member: %v", err)
	}
	if _, err := Open("testdata/nonexistent.npz"); err == nil {
		t.Error("missing file: no error")
	}
}

// TestWriteMatchesNumPy compares the bytes we write with NumPy's np.save
// output for the same arrays, then reads the archive back.
func TestWriteMatchesNumPy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.npz")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.Float32("f32_2x3", []float32{-0.5, -0.25, 0, 0.25, 0.5, 0.75}, 2, 3))
	must(w.Int64("i64_4", []int64{-3, 0, 7, 1 << 40}))
	must(w.Int32("i32_2x2", []int32{1, 2, 3, 4}, 2, 2))
	must(w.Strings("str_3", []string{"train/a/1.jpg", "über/ß.png", ""}))
	must(w.Close())

	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		rc, _ := f.Open()
		got, _ := io.ReadAll(rc)
		rc.Close()
		want, err := os.ReadFile(filepath.Join("testdata", f.Name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: bytes differ from NumPy's\n got %q\nwant %q", f.Name, got[:min(len(got), 128)], want[:min(len(want), 128)])
		}
	}
}

func TestWriteIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keep.npz")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Float32("x", []float32{1, 2, 3}, 2, 2); err == nil {
		t.Fatal("shape mismatch: no error")
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close after error: no error")
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("failed write changed the file: %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("temporary file left behind: %v", ents)
	}
}
