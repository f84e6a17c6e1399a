package flycl_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// No tracked file is a program: an ELF, Mach-O or PE binary in the tree
// is what go build leaves in the folder it runs in (flycl-lab,
// cmd/libflycl/libflycl), committed by mistake; each clone then downloads
// it. Outside a git checkout (an archive) the test skips.
func TestNoBinaryTracked(t *testing.T) {
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	magics := [][]byte{
		[]byte("\x7fELF"),
		{0xcf, 0xfa, 0xed, 0xfe}, // Mach-O 64-bit
		[]byte("MZ"),             // PE
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		f, err := os.Open(filepath.FromSlash(name))
		if err != nil {
			continue // deleted in the work tree
		}
		head := make([]byte, 4)
		n, _ := io.ReadFull(f, head)
		f.Close()
		for _, m := range magics {
			if bytes.HasPrefix(head[:n], m) {
				t.Errorf("%s is a program (it starts %q): build outputs are not committed (git rm --cached it, and add it to .gitignore)", name, head[:n])
			}
		}
	}
}
