package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/format/modelfile"
)

// TestRepair: every stuck state of a model's journal has a command that
// gets out of it. A zero-filled tail (a power loss) needs none: the model
// loads and learns on. A record damaged before whole ones refuses the
// load, naming flycl repair, which keeps the prefix, lists the dropped
// changes and keeps a copy. A model file copied over another model's
// (whose journal stays) refuses the load naming flycl repair, which moves
// the journal aside.
func TestRepair(t *testing.T) {
	dir := t.TempDir()
	model, other := filepath.Join(dir, "m.flycl"), filepath.Join(dir, "o.flycl")
	files := []string{filepath.Join(dir, "a.npz"), filepath.Join(dir, "b.npz"), filepath.Join(dir, "c.npz")}
	blobs(t, files[0], 1, 16, 8, "ant", "bee")
	blobs(t, files[1], 2, 16, 8, "cat")
	blobs(t, files[2], 3, 16, 8, "dog")
	for _, f := range files {
		if _, err := runCLI(t, append([]string{"learn", "--model", model, "--features", f, "--quiet"}, smallModel...)...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := runCLI(t, append([]string{"learn", "--model", other, "--features", files[0], "--quiet"}, smallModel...)...); err != nil {
		t.Fatal(err)
	}
	jp := modelfile.JournalPath(model)
	whole, err := os.ReadFile(jp)
	if err != nil {
		t.Fatalf("flycl learn keeps no journal by default: %v", err)
	}
	hist, err := modelfile.ReadHistory(model, modelfile.ModelID{})
	if err != nil || len(hist) != 3 {
		t.Fatalf("history: %d, %v", len(hist), err)
	}

	// a power loss's zero-filled tail: loads, learns on
	os.WriteFile(jp, append(append([]byte{}, whole...), make([]byte, 4096)...), 0o644)
	if out, err := runCLI(t, "classes", "--model", model); err != nil || !strings.Contains(out, "dog") {
		t.Fatalf("classes with a zero-filled journal tail: %v\n%s", err, out)
	}
	if f, err := store.LoadFile(model); err != nil || len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0], "4096 bytes") {
		t.Fatalf("the warning of a zero-filled tail: %v, %v", f, err)
	}
	if out, err := runCLI(t, "repair", "--model", model); err != nil || !strings.Contains(out, "nothing to repair") && !strings.Contains(out, "never acknowledged") {
		t.Fatalf("repair of a torn tail: %v\n%s", err, out)
	}
	os.WriteFile(jp, whole, 0o644)

	// a damaged first record, whole ones after it
	bad := append([]byte{}, whole...)
	bad[60] ^= 0xff
	os.WriteFile(jp, bad, 0o644)
	_, err = runCLI(t, "classes", "--model", model)
	if err == nil || !strings.Contains(err.Error(), "flycl repair --model "+model) {
		t.Fatalf("classes with a damaged journal: %v", err)
	}
	out, err := runCLI(t, "repair", "--model", model)
	if err != nil {
		t.Fatalf("repair: %v\n%s", err, out)
	}
	for _, want := range []string{"kept a copy", "dropped: version 2, learn of 8 samples (cat)", "dropped: version 3, learn of 8 samples (dog)", "loads: version 3"} {
		if !strings.Contains(out, want) {
			t.Fatalf("repair output lacks %q:\n%s", want, out)
		}
	}
	// two copies kept: the torn tail's (cut above) and the damaged
	// journal's, each as it was, however close in time the repairs ran
	backups, _ := filepath.Glob(jp + ".broken-*")
	if len(backups) != 2 {
		t.Fatalf("backups %v, want the torn tail's and the damaged journal's", backups)
	}
	torn := string(append(append([]byte{}, whole...), make([]byte, 4096)...))
	kept := map[string]bool{}
	for _, p := range backups {
		b, _ := os.ReadFile(p)
		kept[string(b)] = true
	}
	if !kept[string(bad)] || !kept[torn] {
		t.Fatalf("the backups are not the journals as they were (damaged kept: %v, torn kept: %v)", kept[string(bad)], kept[torn])
	}

	// another model's file copied over this one: its journal is foreign
	ob, _ := os.ReadFile(other)
	os.WriteFile(model, ob, 0o644)
	os.WriteFile(jp, whole, 0o644)
	_, err = runCLI(t, "classes", "--model", model)
	if err == nil || !strings.Contains(err.Error(), "another model") || !strings.Contains(err.Error(), "flycl repair --model "+model) {
		t.Fatalf("classes after a cp over the model: %v", err)
	}
	if out, err = runCLI(t, "repair", "--model", model); err != nil || !strings.Contains(out, "moved the journal aside") || !strings.Contains(out, "loads: version 1") {
		t.Fatalf("repair after a cp: %v\n%s", err, out)
	}
	if _, err := os.Stat(modelfile.LockPath(model)); !os.IsNotExist(err) {
		t.Fatalf("a lock file stayed after the commands: %v", err)
	}
}

// TestUndoWithoutJournal: a model learned with --no-journal cannot undo
// its learns, and the error says how to get a journal; the next learn
// without the flag starts one, and that learn can be undone. A model in
// a folder that does not exist says so, and a failed command leaves no
// lock file.
func TestUndoWithoutJournal(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.flycl")
	a, b := filepath.Join(dir, "a.npz"), filepath.Join(dir, "b.npz")
	blobs(t, a, 1, 16, 8, "ant")
	blobs(t, b, 2, 16, 8, "bee")
	if _, err := runCLI(t, append([]string{"learn", "--model", model, "--features", a, "--quiet", "--no-journal"}, smallModel...)...); err != nil {
		t.Fatal(err)
	}
	_, err := runCLI(t, "undo", "--model", model)
	if err == nil || !strings.Contains(err.Error(), "flycl learn starts one") || !strings.Contains(err.Error(), "--no-journal") {
		t.Fatalf("undo without a journal: %v", err)
	}
	if _, err := runCLI(t, "learn", "--model", model, "--features", b, "--quiet"); err != nil {
		t.Fatal(err)
	}
	if out, err := runCLI(t, "undo", "--model", model); err != nil || !strings.Contains(out, "undid the learn of version 2") {
		t.Fatalf("undo of a learn journalled from then on: %v\n%s", err, out)
	}
	_, err = runCLI(t, "learn", "--model", filepath.Join(dir, "missing", "m.flycl"), "--features", a)
	if err == nil || !strings.Contains(err.Error(), "folder") || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("a model in a missing folder: %v", err)
	}
	if _, err := runCLI(t, "learn", "--model", model, "--features", filepath.Join(dir, "none.npz")); err == nil {
		t.Fatal("a learn of a missing file succeeded")
	}
	if _, err := os.Stat(modelfile.LockPath(model)); !os.IsNotExist(err) {
		t.Fatalf("a failed command left the lock file: %v", err)
	}
}

// TestHistoryAfterUnrecordedChange: a model changed past its journal's
// last record (a change the journal could not take) cannot be undone,
// and flycl history says so too: it marks no learn undoable, where it
// listed the journal's last learn as undoable while undo refused it.
func TestHistoryAfterUnrecordedChange(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.flycl")
	a, b := filepath.Join(dir, "a.npz"), filepath.Join(dir, "b.npz")
	blobs(t, a, 1, 16, 8, "ant")
	blobs(t, b, 2, 16, 8, "bee")
	if _, err := runCLI(t, append([]string{"learn", "--model", model, "--features", a, "--quiet"}, smallModel...)...); err != nil {
		t.Fatal(err)
	}
	jp := modelfile.JournalPath(model)
	first, err := os.ReadFile(jp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, "learn", "--model", model, "--features", b, "--quiet"); err != nil {
		t.Fatal(err)
	}
	// the second learn's record gone: the model (version 2) was changed
	// after the journal's last record (version 1)
	if err := os.WriteFile(jp, first, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = runCLI(t, "undo", "--model", model)
	if err == nil || !strings.Contains(err.Error(), "changed without the journal") {
		t.Fatalf("undo past an unrecorded change: %v", err)
	}
	out, err := runCLI(t, "history", "--model", model)
	if err != nil || !strings.Contains(out, "ant") {
		t.Fatalf("history: %v\n%s", err, out)
	}
	if strings.Contains(out, "yes") {
		t.Fatalf("history marks a learn undoable that undo refuses:\n%s", out)
	}
}

// TestRepairJournalFolder: a folder where the journal goes stops every
// command naming flycl repair, and flycl repair gets out of it (it failed
// reading the folder): the folder is moved aside and the model loads.
func TestRepairJournalFolder(t *testing.T) {
	dir := t.TempDir()
	model, a := filepath.Join(dir, "m.flycl"), filepath.Join(dir, "a.npz")
	blobs(t, a, 1, 16, 8, "ant", "bee")
	if _, err := runCLI(t, append([]string{"learn", "--model", model, "--features", a, "--quiet", "--no-journal"}, smallModel...)...); err != nil {
		t.Fatal(err)
	}
	jp := modelfile.JournalPath(model)
	if err := os.Mkdir(jp, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := runCLI(t, "classes", "--model", model)
	if err == nil || !strings.Contains(err.Error(), "flycl repair --model "+model) {
		t.Fatalf("classes with a folder as the journal: %v", err)
	}
	out, err := runCLI(t, "repair", "--model", model)
	if err != nil || !strings.Contains(out, "loads: version 1") {
		t.Fatalf("repair of a folder as the journal: %v\n%s", err, out)
	}
	if fi, err := os.Stat(jp); err == nil {
		t.Fatalf("the folder is still where the journal goes: %v", fi.Mode())
	}
	if kept, _ := filepath.Glob(jp + ".broken-*"); len(kept) != 1 {
		t.Fatalf("the folder was not kept aside: %v", kept)
	}
	if out, err := runCLI(t, "classes", "--model", model); err != nil || !strings.Contains(out, "bee") {
		t.Fatalf("classes after the repair: %v\n%s", err, out)
	}
}
