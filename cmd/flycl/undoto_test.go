package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/store"
)

// TestUndoToCLI: flycl undo --to N prints every learn it takes back and
// the version the model ends at, as it was at N; the same command again
// does nothing and says so; --to 0 takes the model back to as created;
// --to past the model's version exits with the input status, the model
// unchanged.
func TestUndoToCLI(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.flycl")
	files := []string{filepath.Join(dir, "a.npz"), filepath.Join(dir, "b.npz"), filepath.Join(dir, "c.npz")}
	blobs(t, files[0], 1, 16, 8, "ant", "bee")
	blobs(t, files[1], 2, 16, 8, "cat")
	blobs(t, files[2], 3, 16, 8, "dog")
	for i, f := range files {
		args := append([]string{"learn", "--model", model, "--features", f, "--quiet"}, smallModel...)
		if i == 0 {
			args = append(args, "--journal")
		}
		if _, err := runCLI(t, args...); err != nil {
			t.Fatal(err)
		}
	}
	out, err := runCLI(t, "undo", "--model", model, "--to", "1")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"undid the learn of version 3 (8 samples of dog)", "undid the learn of version 2 (8 samples of cat)", "is as it was at version 1: version 5, 2 classes"} {
		if !strings.Contains(out, want) {
			t.Errorf("undo --to 1 does not say %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "version 3 (") > strings.Index(out, "version 2 (") {
		t.Errorf("undo --to 1 took back version 2 before 3:\n%s", out)
	}
	if out, err = runCLI(t, "undo", "--model", model, "--to", "1"); err != nil || !strings.Contains(out, "nothing to undo") || strings.Contains(out, "undid") {
		t.Fatalf("undo --to 1 again: %v\n%s", err, out)
	}
	if _, err = runCLI(t, "undo", "--model", model, "--to", "9"); err == nil || exitCode(err) != exitInput || !strings.Contains(err.Error(), "after the model's version 5") {
		t.Fatalf("undo --to 9: %v (exit %d)", err, exitCode(err))
	}
	if out, err = runCLI(t, "undo", "--model", model, "--to", "0"); err != nil || !strings.Contains(out, "undid the learn of version 1 (16 samples of ant, bee)") {
		t.Fatalf("undo --to 0: %v\n%s", err, out)
	}
	m, err := store.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	if m.Model.Classes().Len() != 0 || m.Model.Version() != 6 {
		t.Fatalf("after undo --to 0: %d classes at version %d", m.Model.Classes().Len(), m.Model.Version())
	}
}
