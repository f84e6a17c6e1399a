package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/format/modelfile"
)

// cutLastRecord cuts the journal of the model file at path at the start
// of its last record (a clean cut: no torn tail to notice), and returns
// how many records it kept.
func cutLastRecord(t *testing.T, path string) int {
	t.Helper()
	jp := modelfile.JournalPath(path)
	b, err := os.ReadFile(jp)
	if err != nil {
		t.Fatal(err)
	}
	const header = 8 + 4 + 8 + 4 + 16
	var starts []int
	for pos := header; pos+8 <= len(b); pos += 8 + int(binary.LittleEndian.Uint32(b[pos:])) {
		starts = append(starts, pos)
	}
	if len(starts) == 0 {
		t.Fatalf("%s has no record", jp)
	}
	if err := os.Truncate(jp, int64(starts[len(starts)-1])); err != nil {
		t.Fatal(err)
	}
	return len(starts) - 1
}

// TestUndoToGapCLI: learn a1 (version 1), learn a2 (version 2), the
// journal cut at the start of its last record (a2's record lost), learn
// a3: the model holds a1, a2 and a3 while the history lacks a2, so
// flycl undo --to 1 must refuse (it cannot give the model as it was at
// version 1 by taking back what the history records) and leave the
// model as it is; a plain undo takes back a3, exactly the last learn.
func TestUndoToGapCLI(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.flycl")
	var files []string
	for i, c := range []string{"a1", "a2", "a3"} {
		f := filepath.Join(dir, c+".npz")
		blobs(t, f, uint64(i+1), 8, 8, c)
		files = append(files, f)
	}
	learn := func(f string, extra ...string) {
		t.Helper()
		args := append([]string{"learn", "--model", model, "--features", f, "--quiet"}, smallModel...)
		if _, err := runCLI(t, append(args, extra...)...); err != nil {
			t.Fatal(err)
		}
	}
	learn(files[0], "--journal")
	learn(files[1])
	if kept := cutLastRecord(t, model); kept != 1 {
		t.Fatalf("the journal kept %d records after the cut, want 1", kept)
	}
	learn(files[2])
	before, err := store.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "undo", "--model", model, "--to", "1")
	if err == nil || exitCode(err) != exitInput || !strings.Contains(err.Error(), "gap") {
		t.Fatalf("undo --to 1 across a lost record: %v (exit %d)\n%s", err, exitCode(err), out)
	}
	if strings.Contains(out, "as it was at version 1") {
		t.Fatalf("undo --to 1 claims the model is as it was at version 1:\n%s", out)
	}
	after, err := store.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	if after.Model.Version() != before.Model.Version() || after.Model.Classes().Len() != 3 {
		t.Fatalf("a refused undo --to 1 changed the model: version %d -> %d, classes %v", before.Model.Version(), after.Model.Version(), after.Model.Classes().Names())
	}
	if out, err = runCLI(t, "undo", "--model", model); err != nil || !strings.Contains(out, "a3") {
		t.Fatalf("undo: %v\n%s", err, out)
	}
	m, err := store.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Model.Classes().Names(); len(got) != 2 || got[0] != "a1" || got[1] != "a2" {
		t.Fatalf("after undoing the last learn the model has %v, want [a1 a2]", got)
	}
	if _, err = runCLI(t, "undo", "--model", model); err == nil || !strings.Contains(err.Error(), "gap") {
		t.Fatalf("a second undo reaches past the lost record: %v", err)
	}
}

// TestUndoVersionCLI: flycl undo --version N takes back the learn of
// version N only when it is the last one, else it exits with the input
// status and the model unchanged.
func TestUndoVersionCLI(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.flycl")
	for i, c := range []string{"a1", "a2"} {
		f := filepath.Join(dir, c+".npz")
		blobs(t, f, uint64(i+1), 8, 8, c)
		args := append([]string{"learn", "--model", model, "--features", f, "--quiet", "--journal"}, smallModel...)
		if _, err := runCLI(t, args...); err != nil {
			t.Fatal(err)
		}
	}
	out, err := runCLI(t, "undo", "--model", model, "--version", "1")
	if err == nil || exitCode(err) != exitInput || !strings.Contains(err.Error(), "the last learn is version 2") {
		t.Fatalf("undo --version 1 with version 2 last: %v (exit %d)\n%s", err, exitCode(err), out)
	}
	if m, err := store.Load(model); err != nil || m.Model.Classes().Len() != 2 {
		t.Fatalf("a refused undo --version changed the model: %v", err)
	}
	if out, err = runCLI(t, "undo", "--model", model, "--version", "2"); err != nil || !strings.Contains(out, "undid the learn of version 2") {
		t.Fatalf("undo --version 2: %v\n%s", err, out)
	}
}
