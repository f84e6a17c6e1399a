package backbone

import (
	"fmt"
	"runtime"
	"time"

	ort "github.com/yalue/onnxruntime_go"
)

// Throughput runs batches of n constant images through s for at least d
// (after one warm-up batch) and returns images per second.
func Throughput(s *Session, n int, d time.Duration) (float64, error) {
	x := make([]float32, n*3*s.model.Size*s.model.Size)
	for i := range x {
		x[i] = float32(i%255)/255 - 0.5
	}
	if _, err := s.Run(x, n); err != nil {
		return 0, err
	}
	start, images := time.Now(), 0
	for time.Since(start) < d {
		if _, err := s.Run(x, n); err != nil {
			return 0, err
		}
		images += n
	}
	return float64(images) / time.Since(start).Seconds(), nil
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
