//go:build !cgo

package backbone

import (
	"errors"
	"time"
)

// errNoCgo is why every ONNX Runtime call fails in a build without cgo:
// ONNX Runtime is a C library.
var errNoCgo = errors.New("this flycl was built without cgo (CGO_ENABLED=0) and cannot load ONNX Runtime; build it with cgo, or give features as .npz")

func loadRuntime(string) error { return errNoCgo }

func runtimeVersion() string { return "" }

type engine struct{}

func newEngine([]byte, string, []string, int, bool) (*engine, error) { return nil, errNoCgo }

func (*engine) close() error { return errNoCgo }

func (*engine) run([]float32, int, int, [][]float32, []int, func([][]float32) error) error {
	return errNoCgo
}

func modelIO(string) (ins, outs []ioInfo, err error) { return nil, nil, errNoCgo }

// RawThroughput measures ONNX Runtime alone on m's graph; without cgo
// there is no ONNX Runtime.
func RawThroughput(*Model, int, int, time.Duration) (float64, error) { return 0, errNoCgo }

// Supported reports whether this build can run ONNX Runtime: it cannot.
func Supported() error { return errNoCgo }
