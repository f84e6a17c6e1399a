//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/format/modelfile"
)

// TestLearnDiskFull: a learn whose save cannot be written (a file size
// limit, RLIMIT_FSIZE through the shell's ulimit, below the model file's
// size: the write fails with EFBIG as on a full disk) is not
// acknowledged: the command fails, the model file keeps its bytes and
// its version, and neither a lock file nor a temporary is left behind.
func TestLearnDiskFull(t *testing.T) {
	bin := buildFlycl(t)
	dir := t.TempDir()
	model := filepath.Join(dir, "m.flycl")
	a, b := filepath.Join(dir, "a.npz"), filepath.Join(dir, "b.npz")
	blobs(t, a, 1, 16, 8, "ant")
	blobs(t, b, 2, 16, 8, "bee")
	if out, err := exec.Command(bin, append([]string{"learn", "--model", model, "--features", a, "--quiet"}, smallModel...)...).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	before, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	// ulimit -f counts blocks of 1024 bytes: half the model file
	limit := len(before) / 2048
	script := fmt.Sprintf("ulimit -f %d && exec %q learn --model %q --features %q --quiet", limit, bin, model, b)
	out, err := exec.Command("sh", "-c", script).CombinedOutput()
	if err == nil {
		t.Fatalf("a learn that could not be saved exited 0:\n%s", out)
	}
	if !strings.Contains(string(out), "file too large") {
		t.Fatalf("the failure does not say why:\n%s", out)
	}
	after, _ := os.ReadFile(model)
	if string(after) != string(before) {
		t.Fatal("the model file changed")
	}
	m, err := store.Load(model)
	if err != nil || m.Model.Version() != 1 {
		t.Fatalf("after the failed learn: %v", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if f := filepath.Join(dir, e.Name()); f == modelfile.LockPath(model) || strings.Contains(e.Name(), ".tmp") {
			t.Errorf("left behind: %s", f)
		}
	}
}
