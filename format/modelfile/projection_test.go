package modelfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/format/npz"
	"github.com/flycl/flycl/projection"
)

// writeSparseW writes the sparse form ExportProjection writes, with a shape
// and seed of the caller's choosing (a forged file when they lie).
func writeSparseW(t testing.TB, path string, w *projection.Matrix, shape []int64, seed bool) {
	t.Helper()
	zw, err := npz.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw.Int32("indices", w.Cols, w.M, w.P)
	zw.Float32("values", w.Vals, w.M, w.P)
	zw.Int64("shape", shape)
	if seed {
		zw.Int64("seed", []int64{int64(*w.Seed)})
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestImportProjectionForgedShape: the shape array of a W file is only a
// claim. A d beyond MaxD (one that would overflow the int32 columns, or
// make the seed check regenerate a W of m·d steps and d-sized scratch) is
// refused with an error naming the file, before anything is built.
func TestImportProjectionForgedShape(t *testing.T) {
	seed := uint64(5)
	w, err := projection.Generate(4, 6, 2, seed)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		shape []int64
		want  string
	}{
		{"d 2^40", []int64{4, 1 << 40}, "d=1099511627776"},
		{"d past int32", []int64{4, 1<<32 + 1}, "d=4294967297"},
		{"d MaxD+1", []int64{4, MaxD + 1}, "d=65537"},
		{"d 0", []int64{4, 0}, "d=0"},
		{"rows", []int64{5, 6}, "does not match 4 rows"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "w.npz")
			writeSparseW(t, path, w, c.shape, true)
			_, err := ImportProjection(path)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("ImportProjection: %v, want an error naming %s and %q", err, path, c.want)
			}
		})
	}
	// The honest shape still imports, and is recognised as seeded.
	path := filepath.Join(t.TempDir(), "w.npz")
	writeSparseW(t, path, w, []int64{4, 6}, true)
	back, err := ImportProjection(path)
	if err != nil || back.Seed == nil || *back.Seed != seed {
		t.Fatalf("honest W: %v (seed %v)", err, back)
	}
}

// FuzzImportProjection: any bytes as a W file give a W that passes
// projection.New's checks, or an error; never a panic or an allocation a
// forged header asks for.
func FuzzImportProjection(f *testing.F) {
	for _, p := range []string{"testdata/dense_w.npz", "testdata/sparse_w.npz", "testdata/ragged_w.npz"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	w, err := projection.Generate(4, 6, 2, 5)
	if err != nil {
		f.Fatal(err)
	}
	dir := f.TempDir()
	for i, shape := range [][]int64{{4, 6}, {4, 1 << 40}} {
		p := filepath.Join(dir, "seed"+string(rune('0'+i))+".npz")
		writeSparseW(f, p, w, shape, true)
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "w.npz")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		w, err := ImportProjection(path)
		if err != nil {
			return
		}
		if w.M <= 0 || w.M > MaxM || w.D <= 0 || w.D > MaxD || w.P <= 0 || w.P > w.D || len(w.Cols) != w.M*w.P || len(w.Vals) != w.M*w.P {
			t.Fatalf("imported W %d×%d p=%d with %d columns and %d values", w.M, w.D, w.P, len(w.Cols), len(w.Vals))
		}
		if _, err := projection.New(w.M, w.D, w.P, w.Cols, w.Vals); err != nil {
			t.Fatalf("imported W fails projection.New: %v", err)
		}
	})
}
