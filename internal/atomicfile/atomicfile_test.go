package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCommitAndAbort(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("old"), 0o644)
	f, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("half-written")
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Fatal("target changed before Commit")
	}
	f.Abort()
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Fatal("Abort changed the target")
	}
	f, _ = Create(p)
	f.WriteString("new")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Fatalf("after Commit: %q", b)
	}
	if err := f.Commit(); err == nil {
		t.Error("second Commit: no error")
	}
	f.Abort() // harmless after Commit
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left over: %v", ents)
	}
	if _, err := Create(filepath.Join(dir, "missing", "f")); err == nil {
		t.Error("missing directory: no error")
	}
}

func TestWriteFile(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		fill func(io.Writer) error
		want string // content of the target afterwards
		err  error
	}{
		{"success", func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }, "new", nil},
		{"fill fails after writing", func(w io.Writer) error { io.WriteString(w, "half"); return boom }, "old", boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "f")
			os.WriteFile(p, []byte("old"), 0o644)
			err := WriteFile(p, tc.fill)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if err != nil && !strings.Contains(err.Error(), p) {
				t.Errorf("error %q does not name %s", err, p)
			}
			if b, _ := os.ReadFile(p); string(b) != tc.want {
				t.Errorf("target holds %q, want %q", b, tc.want)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("%d entries in the directory, want only the target", len(ents))
			}
		})
	}
}

// TestCreateInMissingFolder: a file in a folder that does not exist is
// refused naming the folder (not the temporary file's name), and still
// matches fs.ErrNotExist.
func TestCreateInMissingFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nodir")
	path := filepath.Join(dir, "out.onnx")
	_, err := Create(path)
	if err == nil || !strings.Contains(err.Error(), "the folder "+dir+" does not exist") || strings.Contains(err.Error(), ".tmp-") || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Create in a missing folder: %v", err)
	}
}
