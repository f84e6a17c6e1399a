package main

import (
	"testing"

	"github.com/flycl/flycl/cmd/internal/clitest"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/projection"
)

// writeW writes the m×d projection W with p non-zeros per row for seed to
// path, as flycl-lab export-w does (projection.Generate,
// modelfile.ExportProjection).
func writeW(t *testing.T, path string, m, d, p int, seed uint64) {
	t.Helper()
	w, err := projection.Generate(m, d, p, seed)
	if err != nil {
		t.Fatal(err)
	}
	if err := modelfile.ExportProjection(path, w); err != nil {
		t.Fatal(err)
	}
}

// writeBlobs and writeScaledBlobs write 4 Gaussian blobs in 6
// dimensions (clitest.WriteBlobs).
func writeBlobs(t *testing.T, path string, seed uint64, perClass int) {
	clitest.WriteBlobs(t, path, seed, perClass)
}

func writeScaledBlobs(t *testing.T, path string, seed uint64, perClass int, scale float32) {
	clitest.WriteScaledBlobs(t, path, seed, perClass, scale)
}
