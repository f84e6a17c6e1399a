package extract

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"os"
	"testing"

	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/dataset"
)

// A byte flipped in a cached feature file or a resumable chunk file (the
// zip CRC-32 of its member no longer matches) must not be used: the run
// extracts again instead (issue 11 §2). No ONNX Runtime is needed: using
// the file is the only way this fake model can succeed, and extracting
// again fails when its session is opened.
func TestCorruptCacheIsNotUsed(t *testing.T) {
	root := t.TempDir()
	writeImages(t, root, 5)
	ds, err := dataset.Open("folder:"+root, "train")
	if err != nil {
		t.Fatal(err)
	}
	m := &backbone.Model{Name: "fake", Hash: "0", Outputs: []string{"f"}, Dims: []int{3}}
	s := &features.Set{N: 5, D: 3, X: make([]float32, 15), Labels: []int{0, 0, 0, 1, 1}}
	for i := range s.X {
		s.X[i] = float32(i) + 0.5
	}
	corrupt := func(path string) {
		if err := features.Save(path, s); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		i := bytes.Index(b, binary.LittleEndian.AppendUint32(nil, math.Float32bits(7.5)))
		b[i+3] ^= 0x01
		os.WriteFile(path, b, 0o644)
	}
	for _, which := range []string{"cache", "chunk"} {
		j := &Job{Data: ds, DataKey: dataKey(t, "folder:"+root, "train"), Model: m, CacheDir: t.TempDir(), Chunk: 32, BatchSize: 32}
		os.MkdirAll(j.CacheDir, 0o755)
		if which == "cache" {
			corrupt(j.CachePath())
		} else {
			corrupt(j.chunkPath(0))
		}
		got, cached, err := Run(context.Background(), j)
		if err == nil || cached {
			t.Errorf("corrupt %s file used: cached=%v err=%v features %v", which, cached, err, got.X)
		}
	}
}
