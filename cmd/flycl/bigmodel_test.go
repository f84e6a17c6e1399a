package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/internal/procmem"
)

// A new model larger than the memory available is refused before it is
// made, naming --m and the MiB it needs (it was Go's out-of-memory crash
// with a stack trace: the m×m statistics are allocated with the model),
// exit status 2, and no model file is left. m = 131072 is the largest a
// model file holds; its statistics alone take 64 GiB, so the test skips
// on a machine that has that much available (it would make the model).
func TestNewModelTooLargeForMemory(t *testing.T) {
	const m = 131072
	cfg := flycl.Config{M: m, P: 4}
	if avail := procmem.Available(); avail <= 0 || deploy.NewModelBytes(cfg, 6) <= avail {
		t.Skipf("%d bytes available (0: unknown): a model of m=%d fits", avail, m)
	}
	dir := t.TempDir()
	feats, model := filepath.Join(dir, "f.npz"), filepath.Join(dir, "m.flycl")
	writeBlobs(t, feats, 1, 10)
	_, err := runCLI(t, "learn", "--model", model, "--features", feats, "--m", "131072", "--p", "4", "--k", "100")
	if !errors.Is(err, deploy.ErrNoMemory) || !strings.Contains(err.Error(), "--m 131072") || !strings.Contains(err.Error(), "MiB") {
		t.Fatalf("learn --m %d: %v; want deploy.ErrNoMemory naming --m and the MiB it needs", m, err)
	}
	if exitCode(err) != exitInput {
		t.Errorf("exit status %d, want %d (input refused)", exitCode(err), exitInput)
	}
	if _, err := os.Stat(model); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a model file after the refusal: %v", err)
	}
}
