package main

import (
	"testing"

	"github.com/flycl/flycl/cmd/internal/clitest"
)

// runCLI runs flycl-lab with args in this process and returns what it
// wrote to stdout.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return clitest.Run(t, newRoot, args...)
}

// writeBlobs and writeScaledBlobs write 4 Gaussian blobs in 6
// dimensions (clitest.WriteBlobs).
func writeBlobs(t *testing.T, path string, seed uint64, perClass int) {
	clitest.WriteBlobs(t, path, seed, perClass)
}

func writeScaledBlobs(t *testing.T, path string, seed uint64, perClass int, scale float32) {
	clitest.WriteScaledBlobs(t, path, seed, perClass, scale)
}
