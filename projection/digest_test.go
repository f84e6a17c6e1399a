package projection

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// TestDigest: the digest is SHA-256 of the layout its documentation
// gives, written out here byte by byte for a 2×3 W with p = 2; any
// change of W (a value's bits, a column, the shape) changes it.
func TestDigest(t *testing.T) {
	w, err := New(2, 3, 2, []int32{0, 2, 1, 2}, []float32{1, -2, 0.5, 3})
	if err != nil {
		t.Fatal(err)
	}
	layout := []byte{
		2, 0, 0, 0, 0, 0, 0, 0, // m
		3, 0, 0, 0, 0, 0, 0, 0, // d
		2, 0, 0, 0, 0, 0, 0, 0, // p
		0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, // columns
		0x00, 0x00, 0x80, 0x3f, // 1
		0x00, 0x00, 0x00, 0xc0, // -2
		0x00, 0x00, 0x00, 0x3f, // 0.5
		0x00, 0x00, 0x40, 0x40, // 3
	}
	sum := sha256.Sum256(layout)
	if got, want := w.Digest(), hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("Digest = %s, want %s", got, want)
	}
	for name, v := range map[string]*Matrix{
		"value":  must(New(2, 3, 2, []int32{0, 2, 1, 2}, []float32{1, -2, 0.5, -3})),
		"column": must(New(2, 3, 2, []int32{0, 1, 1, 2}, []float32{1, -2, 0.5, 3})),
		"shape":  must(New(2, 4, 2, []int32{0, 2, 1, 2}, []float32{1, -2, 0.5, 3})),
	} {
		if v.Digest() == w.Digest() {
			t.Errorf("another %s: the same digest", name)
		}
	}
}

func must(w *Matrix, err error) *Matrix {
	if err != nil {
		panic(err)
	}
	return w
}

// TestGenerateStable: W is a fixed function of (m, d, p, seed) on every
// platform and release (model files record only the seed): the digests
// of two generated matrices are those W has always had (recorded from the
// generator as it shipped). A change of the generator's arithmetic, its
// random stream or its order of draws changes them.
func TestGenerateStable(t *testing.T) {
	for _, c := range []struct {
		m, d, p int
		seed    uint64
		want    string
	}{
		{100, 64, 10, 7, "600bda429ff24dd9b9679b371c81e25ea90b72bfca4626f869832d6f7923bf66"},
		{3000, 512, 300, 42, "46908d8492643fa6581a946f1567e70075ca56000b80b5729de5f021cc7343aa"},
	} {
		w, err := Generate(c.m, c.d, c.p, c.seed)
		if err != nil {
			t.Fatal(err)
		}
		if got := w.Digest(); got != c.want {
			t.Errorf("Generate(%d, %d, %d, %d): digest %s, want %s", c.m, c.d, c.p, c.seed, got, c.want)
		}
	}
}
