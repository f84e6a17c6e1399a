package ortnode

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
)

//go:embed run.js
var script []byte

// ErrUnavailable is wrapped by Find when node or onnxruntime-node is missing.
var ErrUnavailable = errors.New("ortnode: Node.js ONNX Runtime not available")

// Runner runs graphs with one node binary and one node_modules folder.
type Runner struct {
	Node    string // the node binary
	Modules string // a node_modules folder holding onnxruntime-node
}

// Find returns a runner for the node on PATH and the node_modules folder
// modules, or an error wrapping ErrUnavailable that says what is missing.
func Find(modules string) (*Runner, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("%w: no node on PATH", ErrUnavailable)
	}
	abs, err := filepath.Abs(modules)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if _, err := os.Stat(filepath.Join(abs, "onnxruntime-node", "package.json")); err != nil {
		return nil, fmt.Errorf("%w: no onnxruntime-node in %s (make ort installs it)", ErrUnavailable, abs)
	}
	return &Runner{Node: node, Modules: abs}, nil
}

// Output is one output of a run: float32, int64 or bool values and the
// shape.
type Output struct {
	Type  string `json:"type"`
	Dims  []int  `json:"dims"`
	Float []float32
	Int   []int64
	Bool  []bool
}

// Result is what a run gave.
type Result struct {
	Inputs  []string           `json:"inputs"`
	Outputs map[string]*Output `json:"outputs"`
	// SecondsPerRun is the mean time of the repeated runs (0 without).
	SecondsPerRun float64 `json:"seconds_per_run"`
}

// Run writes model and the float32 input x (of the given shape) to a
// temporary folder, runs them in Node with feeds {input: x}, and reads
// every output back. With repeat > 0 it also times repeat more runs of
// the same batch (after the first, which warms up).
func (r *Runner) Run(ctx context.Context, model []byte, input string, x []float32, shape []int, repeat int) (*Result, error) {
	dir, err := os.MkdirTemp("", "ortnode")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	raw := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	job, _ := json.Marshal(map[string]any{"model": filepath.Join(dir, "m.onnx"), "input": input,
		"file": filepath.Join(dir, "x.f32"), "shape": shape, "out": dir, "repeat": repeat})
	for name, b := range map[string][]byte{"m.onnx": model, "x.f32": raw, "job.json": job, "run.js": script} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return nil, err
		}
	}
	cmd := exec.CommandContext(ctx, r.Node, filepath.Join(dir, "run.js"), filepath.Join(dir, "job.json"))
	cmd.Env = append(os.Environ(), "NODE_PATH="+r.Modules)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("ortnode: node run.js: %v: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	var res Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return nil, fmt.Errorf("ortnode: node printed %q: %v", stdout.String(), err)
	}
	for name, o := range res.Outputs {
		b, err := os.ReadFile(filepath.Join(dir, name+".bin"))
		if err != nil {
			return nil, err
		}
		n := 1
		for _, d := range o.Dims {
			n *= d
		}
		switch o.Type {
		case "float32":
			if len(b) != 4*n {
				return nil, fmt.Errorf("ortnode: output %s: %d bytes for shape %v", name, len(b), o.Dims)
			}
			o.Float = make([]float32, n)
			for i := range o.Float {
				o.Float[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			}
		case "int64":
			if len(b) != 8*n {
				return nil, fmt.Errorf("ortnode: output %s: %d bytes for shape %v", name, len(b), o.Dims)
			}
			o.Int = make([]int64, n)
			for i := range o.Int {
				o.Int[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
			}
		case "bool":
			if len(b) != n {
				return nil, fmt.Errorf("ortnode: output %s: %d bytes for shape %v", name, len(b), o.Dims)
			}
			o.Bool = make([]bool, n)
			for i, v := range b {
				o.Bool[i] = v != 0
			}
		default:
			return nil, fmt.Errorf("ortnode: output %s has type %s", name, o.Type)
		}
	}
	return &res, nil
}
