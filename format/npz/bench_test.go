package npz

import (
	"path/filepath"
	"testing"
)

// BenchmarkReadFloat32 reads a 5000×768 float32 array (a feature matrix)
// with its CRC-32 check: go test -run XXX -bench ReadFloat32 ./npz
func BenchmarkReadFloat32(b *testing.B) {
	p := filepath.Join(b.TempDir(), "x.npz")
	w, err := Create(p)
	if err != nil {
		b.Fatal(err)
	}
	x := make([]float32, 5000*768)
	for i := range x {
		x[i] = float32(i)
	}
	w.Float32("x", x, 5000, 768)
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(4 * len(x)))
	for b.Loop() {
		r, err := Open(p)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := r.Float32("x"); err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
}
