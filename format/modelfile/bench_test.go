package modelfile

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/flycl/flycl"
)

// BenchmarkEncodeDecode writes and reads a model of m = 4000 with 20
// classes in memory (G is 32 MB); b.SetBytes makes go test print MB/s.
// Run: go test -run '^$' -bench EncodeDecode ./modelfile
func BenchmarkEncodeDecode(b *testing.B) {
	const d, m = 64, 4000
	model, err := flycl.New(flycl.Config{M: m, P: 16, K: 1000, Lambdas: []float64{1, 100}}, d)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	x := make([]float32, 400*d)
	y := make([]int, 400)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for i := range y {
		y[i] = i % 20
	}
	if _, err := model.Learn(context.Background(), x, y, nil); err != nil {
		b.Fatal(err)
	}
	f := &File{Snapshot: model.Snapshot()}
	var buf bytes.Buffer
	if err := Encode(&buf, f); err != nil {
		b.Fatal(err)
	}
	size := int64(buf.Len())
	b.Run("encode", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			if err := Encode(io.Discard, f); err != nil {
				b.Fatal(err)
			}
		}
	})
	data := buf.Bytes()
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			if _, err := Decode(bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("snapshot", func(b *testing.B) {
		for b.Loop() {
			model.Snapshot()
		}
	})
}
