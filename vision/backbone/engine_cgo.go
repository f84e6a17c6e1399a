//go:build cgo

package backbone

import (
	"fmt"
	"runtime"
	"time"

	ort "github.com/yalue/onnxruntime_go"
)

// This file is everything that touches ONNX Runtime (through cgo); a build
// without cgo gets engine_nocgo.go instead, whose functions say so.

// loadRuntime loads the ONNX Runtime shared library at lib.
func loadRuntime(lib string) error {
	ort.SetSharedLibraryPath(lib)
	return ort.InitializeEnvironment(ort.WithLogLevelError())
}

func runtimeVersion() string { return ort.GetVersion() }

// Supported reports whether this build can run ONNX Runtime (a build
// without cgo cannot): nil here. Whether the library loads is Init's
// answer.
func Supported() error { return nil }

// engine is one ONNX Runtime session of a graph with one image input.
type engine struct {
	s *ort.DynamicAdvancedSession
	n int // outputs
}

// newEngine compiles the ONNX graph data for ONNX Runtime with the named
// input and outputs, threads intra-op threads (> 0) and, with noSpin,
// idle worker threads that do not spin.
func newEngine(data []byte, input string, outputs []string, threads int, noSpin bool) (*engine, error) {
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, err
	}
	defer opts.Destroy()
	if err := opts.SetIntraOpNumThreads(threads); err != nil {
		return nil, err
	}
	if err := opts.SetInterOpNumThreads(1); err != nil {
		return nil, err
	}
	if err := opts.SetGraphOptimizationLevel(ort.GraphOptimizationLevelEnableAll); err != nil {
		return nil, err
	}
	if noSpin {
		if err := opts.AddSessionConfigEntry("session.intra_op.allow_spinning", "0"); err != nil {
			return nil, err
		}
	}
	s, err := ort.NewDynamicAdvancedSessionWithONNXData(data, []string{input}, outputs, opts)
	if err != nil {
		return nil, err
	}
	return &engine{s: s, n: len(outputs)}, nil
}

func (e *engine) close() error { return e.s.Destroy() }

// run feeds n images x (n×3×size×size). With outs, output i is written
// into outs[i] (n×dims[i] values); without, ONNX Runtime allocates the
// outputs and use sees their data before they are released.
func (e *engine) run(x []float32, n, size int, outs [][]float32, dims []int, use func([][]float32) error) error {
	in, err := ort.NewTensor(ort.NewShape(int64(n), 3, int64(size), int64(size)), x)
	if err != nil {
		return err
	}
	defer in.Destroy()
	if outs != nil && len(outs) != e.n {
		return fmt.Errorf("%d output buffers for %d outputs", len(outs), e.n)
	}
	vals := make([]ort.Value, e.n)
	defer func() {
		for _, v := range vals {
			if v != nil {
				v.Destroy()
			}
		}
	}()
	for i := range outs {
		t, err := ort.NewTensor(ort.NewShape(int64(n), int64(dims[i])), outs[i])
		if err != nil {
			return err
		}
		vals[i] = t
	}
	if err := e.s.Run([]ort.Value{in}, vals); err != nil {
		return err
	}
	if outs != nil || use == nil {
		return nil
	}
	data := make([][]float32, len(vals))
	for i, v := range vals {
		t, ok := v.(*ort.Tensor[float32])
		if !ok {
			return fmt.Errorf("output %d is %T, want float32", i, v)
		}
		data[i] = t.GetData()
	}
	return use(data)
}

// modelIO reads the inputs and outputs of the ONNX file at path.
func modelIO(path string) (ins, outs []ioInfo, err error) {
	i, o, err := ort.GetInputOutputInfo(path)
	if err != nil {
		return nil, nil, err
	}
	conv := func(v []ort.InputOutputInfo) []ioInfo {
		r := make([]ioInfo, len(v))
		for k := range v {
			r[k] = ioInfo{Name: v[k].Name, Dimensions: v[k].Dimensions}
		}
		return r
	}
	return conv(i), conv(o), nil
}

// RawThroughput measures ONNX Runtime alone on m's graph: one session with
// pre-allocated input and output tensors, Run in a loop, no Go work per
// call. It is the ceiling Session.Run is compared with.
func RawThroughput(m *Model, n, threads int, d time.Duration) (float64, error) {
	if err := Init(""); err != nil {
		return 0, err
	}
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return 0, err
	}
	defer opts.Destroy()
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	opts.SetIntraOpNumThreads(threads)
	opts.SetInterOpNumThreads(1)
	x := make([]float32, n*3*m.Size*m.Size)
	for i := range x {
		x[i] = float32(i%255)/255 - 0.5
	}
	in, err := ort.NewTensor(ort.NewShape(int64(n), 3, int64(m.Size), int64(m.Size)), x)
	if err != nil {
		return 0, err
	}
	defer in.Destroy()
	var outs []ort.Value
	for _, dim := range m.Dims {
		t, err := ort.NewEmptyTensor[float32](ort.NewShape(int64(n), int64(dim)))
		if err != nil {
			return 0, err
		}
		defer t.Destroy()
		outs = append(outs, t)
	}
	s, err := ort.NewAdvancedSessionWithONNXData(m.ONNX, []string{m.Input}, m.Outputs, []ort.Value{in}, outs, opts)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", m.Name, err)
	}
	defer s.Destroy()
	if err := s.Run(); err != nil {
		return 0, err
	}
	start, images := time.Now(), 0
	for time.Since(start) < d {
		if err := s.Run(); err != nil {
			return 0, err
		}
		images += n
	}
	return float64(images) / time.Since(start).Seconds(), nil
}
