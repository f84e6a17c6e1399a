package backbone

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

var (
	initMu  sync.Mutex
	initErr error
	initLib string
)

// Init loads ONNX Runtime from the shared library at lib once per process.
// The caller finds the library (cmd/flycl resolves --ort-lib, then
// FLYCL_ORT_LIB, then where scripts/install-deps puts it). ONNX Runtime's
// environment is process-wide, so a later call with another path is an
// error; a later call with "" succeeds when the runtime is already loaded.
func Init(lib string) error {
	if lib == "" {
		initMu.Lock()
		defer initMu.Unlock()
		if initLib == "" {
			return errors.New("ONNX Runtime not loaded: no library path given to backbone.Init")
		}
		return initErr
	}
	if _, err := os.Stat(lib); err != nil {
		return fmt.Errorf("ONNX Runtime library: %w", err)
	}
	// One library file, however its path is written (relative, through
	// a link), is the same library.
	if abs, err := filepath.Abs(lib); err == nil {
		lib = abs
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			lib = real
		}
	}
	initMu.Lock()
	defer initMu.Unlock()
	if initLib == "" {
		initLib = lib
		if err := loadRuntime(lib); err != nil {
			initErr = fmt.Errorf("load ONNX Runtime from %s: %w", lib, err)
		}
	}
	if initErr == nil && lib != initLib {
		return fmt.Errorf("ONNX Runtime already loaded from %s, not %s", initLib, lib)
	}
	return initErr
}

// Version returns ONNX Runtime's version string (after Init; "" in a
// build without cgo).
func Version() string { return runtimeVersion() }

// Session runs one model.
type Session struct {
	model *Model
	e     *engine
	mu    sync.Mutex
}

// ErrNoRuntime is wrapped by NewSession when ONNX Runtime is not available.
var ErrNoRuntime = errors.New("ONNX Runtime not available")

// NewSession compiles m for ONNX Runtime with threads intra-op threads
// (0: one per CPU).
func (m *Model) NewSession(threads int) (*Session, error) {
	return m.NewSessionWith(SessionOptions{Threads: threads})
}

// SessionOptions tune a session.
type SessionOptions struct {
	Threads int // intra-op threads (0: one per CPU)
	// NoSpin stops ONNX Runtime's idle worker threads from spinning
	// (session.intra_op.allow_spinning = 0): slower alone, but it leaves
	// the CPUs to work that overlaps inference, such as decoding.
	NoSpin bool
}

// MaxThreads bounds SessionOptions.Threads: far more intra-op threads
// than CPUs only contend, and ONNX Runtime asked for 100000 spun up
// threads for minutes instead of running.
const MaxThreads = 1024

// NewSessionWith compiles m for ONNX Runtime with options o.
func (m *Model) NewSessionWith(o SessionOptions) (*Session, error) {
	threads := o.Threads
	if threads > MaxThreads {
		return nil, fmt.Errorf("%s: ONNX Runtime threads %d: at most %d (0: one per CPU)", m.Name, threads, MaxThreads)
	}
	if err := Init(""); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoRuntime, err)
	}
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	e, err := newEngine(m.ONNX, m.Input, m.Outputs, threads, o.NoSpin)
	if err != nil {
		return nil, fmt.Errorf("%s: create ONNX Runtime session: %w", m.Name, err)
	}
	return &Session{model: m, e: e}, nil
}

// Close releases the session.
func (s *Session) Close() error { return s.e.close() }

// Run feeds n images (n×3×H×W float32, preprocessed) and returns each
// output as n×dim values, in the order of Model.Outputs.
func (s *Session) Run(x []float32, n int) ([][]float32, error) {
	m := s.model
	per := 3 * m.Size * m.Size
	if n <= 0 || len(x) != n*per {
		return nil, fmt.Errorf("%s: input has %d values, want n×3×%d×%d with n=%d", m.Name, len(x), m.Size, m.Size, n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	res := make([][]float32, len(m.Outputs))
	for i, d := range m.Dims {
		res[i] = make([]float32, n*d)
	}
	if err := s.e.run(x, n, m.Size, res, m.Dims, nil); err != nil {
		return nil, fmt.Errorf("%s: run: %w", m.Name, err)
	}
	return res, nil
}
