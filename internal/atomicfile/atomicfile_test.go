package atomicfile

import (
	"os"
	"path/filepath"
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
