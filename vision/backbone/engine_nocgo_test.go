//go:build !cgo

package backbone

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoCgo checks what a build without cgo says when asked for ONNX
// Runtime: Init of an existing library file names cgo, and a session is
// ErrNoRuntime (which the runtime tests skip on).
func TestNoCgo(t *testing.T) {
	lib := filepath.Join(t.TempDir(), "libonnxruntime.so")
	if err := os.WriteFile(lib, []byte("not a library"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Init(lib)
	if !errors.Is(err, errNoCgo) || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Fatalf("Init: %v, want the no-cgo error", err)
	}
	build := tinyConvNet(tinyWeights(1, []int{3, 4}), 1)
	m, err := build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.NewSession(1); !errors.Is(err, ErrNoRuntime) {
		t.Fatalf("NewSession: %v, want ErrNoRuntime", err)
	}
	if _, err := Calibrate(context.Background(), build, CalibMinMax, randomImages(1, 2, 8), 2, 2, 1); !errors.Is(err, ErrNoRuntime) {
		t.Fatalf("Calibrate: %v, want ErrNoRuntime", err)
	}
	if _, err := FromONNXFile(lib, ""); !errors.Is(err, ErrNoRuntime) {
		t.Fatalf("FromONNXFile: %v, want ErrNoRuntime", err)
	}
}

// optimisedGraph needs ONNX Runtime: without cgo the test skips.
func optimisedGraph(t *testing.T, _ *Model) []byte {
	t.Skip(errNoCgo)
	return nil
}
