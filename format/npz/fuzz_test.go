package npz

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func addFiles(f *testing.F, pattern string) {
	files, _ := filepath.Glob(pattern)
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
}

// FuzzNPZ reads every array of an arbitrary archive every way: no input
// may panic, and none may allocate more than a small multiple of its size
// (checked by the size tests; here the fuzzer's memory limit catches it).
func FuzzNPZ(f *testing.F) {
	addFiles(f, "testdata/*.npz")
	f.Add(mustZip(f, zmember{"x.npy", npyBytes("<f4", "(2, 2)", f32Bytes(1, 2, 3, 4)), 8}))
	f.Add(mustZip(f, zmember{"s.npy", npyBytes(">U3", "(2,)", make([]byte, 24)), 0}))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := NewReader(bytes.NewReader(b), int64(len(b)), "fuzz.npz")
		if err != nil {
			return
		}
		for _, k := range r.Keys() {
			r.Shape(k)
			if v, shape, err := r.Float32(k); err == nil {
				if n, err := Count(shape); err != nil || n != len(v) {
					t.Fatalf("%s: %d values for shape %v", k, len(v), shape)
				}
			}
			r.Int64(k)
			r.Strings(k)
		}
	})
}

// FuzzNPY reads an arbitrary .npy stream as float32.
func FuzzNPY(f *testing.F) {
	addFiles(f, "testdata/*.npy")
	f.Add(npyBytes("<f8", "(3,)", make([]byte, 24)))
	f.Add(npyBytes("<f4", "(4611686018427387904,)", nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, shape, err := ReadFloat32NPY(bytes.NewReader(b))
		if err == nil {
			if n, err := Count(shape); err != nil || n != len(v) {
				t.Fatalf("%d values for shape %v", len(v), shape)
			}
		}
	})
}

func mustZip(f *testing.F, members ...zmember) []byte {
	p := writeZip(f, f.TempDir(), "seed.npz", members...)
	b, err := os.ReadFile(p)
	if err != nil {
		f.Fatal(err)
	}
	return b
}
