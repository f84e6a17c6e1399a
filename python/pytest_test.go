// Package python_test runs the Python package's tests (python/tests, with
// pytest) from go test, so that make test runs them: it builds libflycl.so
// (go build -buildmode=c-shared ./cmd/libflycl) and bin/flycl into a
// temporary folder and runs the interpreter that interpreter chooses.
package python_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// interpreter returns the first Python 3 that imports numpy, trying
// $FLYCL_PYTHON, then python3 on PATH, then /usr/bin/python3 (Debian's,
// where python3 on PATH may be another build without numpy), and why none
// fits when none does.
func interpreter() (string, string) {
	var cands []string
	if p := os.Getenv("FLYCL_PYTHON"); p != "" {
		cands = append(cands, p)
	}
	if p, err := exec.LookPath("python3"); err == nil {
		cands = append(cands, p)
	}
	cands = append(cands, "/usr/bin/python3")
	var why []string
	for _, p := range cands {
		out, err := exec.Command(p, "-c", "import numpy").CombinedOutput()
		if err == nil {
			return p, ""
		}
		why = append(why, p+": "+firstLine(string(out), err))
	}
	return "", strings.Join(why, "; ")
}

func firstLine(s string, err error) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return err.Error()
	}
	return s
}

func TestPython(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the Python tests build libflycl and run pytest (minutes)")
	}
	py, why := interpreter()
	if py == "" {
		t.Skipf("no python3 with numpy (Debian: apt-get install python3-numpy python3-pytest python3-sklearn): %s", why)
	}
	if out, err := exec.Command(py, "-c", "import pytest").CombinedOutput(); err != nil {
		t.Fatalf("%s has numpy but not pytest (Debian: apt-get install python3-pytest): %s", py, firstLine(string(out), err))
	}
	dir := t.TempDir()
	lib := filepath.Join(dir, "libflycl.so")
	bin := filepath.Join(dir, "flycl")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	for _, args := range [][]string{
		{"build", "-buildmode=c-shared", "-o", lib, "../cmd/libflycl"},
		{"build", "-o", bin, "../cmd/flycl"},
		// beside flycl, which runs the research lab's commands (run) through it
		{"build", "-o", filepath.Join(dir, "flycl-lab"), "../cmd/flycl-lab"},
	} {
		cmd := exec.CommandContext(ctx, "go", args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// Importing torch sets OpenBLAS to one thread in the whole process
	// (torch.set_num_threads), and OpenBLAS rounds differently with one
	// thread than with several: the tests that import torch run in a
	// process of their own, so that the others compare the Python layer
	// with the CLI at the same thread count.
	torchTests := []string{"tests/test_frigate_head.py", "tests/test_torch_reference.py"}
	rest := []string{"tests"}
	for _, f := range torchTests {
		rest = append(rest, "--ignore", f)
	}
	for _, files := range [][]string{rest, torchTests} {
		args := append([]string{"-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider"}, files...)
		cmd := exec.CommandContext(ctx, py, args...)
		cmd.Env = append(os.Environ(), "FLYCL_LIB="+lib, "FLYCL_BIN="+bin, "PYTHONPATH=.", "PYTHONDONTWRITEBYTECODE=1")
		out, err := cmd.CombinedOutput()
		t.Logf("%s %s (python %s):\n%s", py, strings.Join(args, " "), version(py), out)
		if err != nil {
			t.Fatalf("pytest: %v", err)
		}
	}
}

func version(py string) string {
	out, err := exec.Command(py, "-c", "import sys, numpy; print(sys.version.split()[0], 'numpy', numpy.__version__)").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}
