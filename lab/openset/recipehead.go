package openset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/flycl/flycl/format/npz"
)

// PythonHead runs the recipe's head in a Python process: the script
// python/bench/frigate_head.py (PyTorch), given a folder of jobs. All the
// jobs go to one process, so that the interpreter and torch start once;
// the script times each training itself.
type PythonHead struct {
	// Python is the interpreter (default python3); Script the head's
	// script.
	Python, Script string
	// Stderr receives the process's standard error (nil: discarded).
	Stderr *os.File
}

// ErrHead is returned when the head's process fails or gives back
// results that do not fit its jobs.
var ErrHead = errors.New("openset: the recipe's head")

// Run writes x (features.npz: the n×d features) and one job-NNNNNN.npz
// per job (rows: the training rows, y, classes, seed, test) to a
// temporary folder, runs Script on it and reads its out-NNNNNN.npz files
// (logits, seconds, rss_kib).
func (h PythonHead) Run(ctx context.Context, x []float32, n, d int, jobs []HeadJob) ([]HeadResult, error) {
	py := h.Python
	if py == "" {
		py = "python3"
	}
	dir, err := os.MkdirTemp("", "flycl-head-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	w, err := npz.Create(filepath.Join(dir, "features.npz"))
	if err != nil {
		return nil, err
	}
	if err := w.Float32("x", x, n, d); err != nil {
		w.Abort()
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	ints := func(v []int) []int64 {
		out := make([]int64, len(v))
		for i, x := range v {
			out[i] = int64(x)
		}
		return out
	}
	for i, j := range jobs {
		w, err := npz.Create(filepath.Join(dir, fmt.Sprintf("job-%06d.npz", i)))
		if err != nil {
			return nil, err
		}
		for _, a := range []struct {
			name string
			v    []int64
		}{{"rows", ints(j.Train)}, {"y", ints(j.Y)}, {"classes", []int64{int64(j.Classes)}}, {"seed", []int64{int64(j.Seed)}}, {"test", ints(j.Test)}} {
			if err := w.Int64(a.name, a.v, len(a.v)); err != nil {
				w.Abort()
				return nil, err
			}
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
	}
	cmd := exec.CommandContext(ctx, py, h.Script, dir)
	if h.Stderr != nil {
		cmd.Stderr = h.Stderr
	}
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%w: %s %s: %w", ErrHead, py, h.Script, err)
	}
	out := make([]HeadResult, len(jobs))
	for i, j := range jobs {
		path := filepath.Join(dir, fmt.Sprintf("out-%06d.npz", i))
		r, err := npz.Open(path)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrHead, err)
		}
		logits, _, err1 := r.Float32("logits")
		secs, _, err2 := r.Float32("seconds")
		rss, _, err3 := r.Int64("rss_kib")
		r.Close()
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrHead, err)
		}
		if len(logits) != len(j.Test)*j.Classes || len(secs) != 1 || len(rss) != 1 {
			return nil, fmt.Errorf("%w: %s: %d logits for %d photos × %d classes", ErrHead, path, len(logits), len(j.Test), j.Classes)
		}
		out[i] = HeadResult{Logits: logits, Seconds: float64(secs[0]), PeakRSS: rss[0] * 1024}
	}
	return out, nil
}
