package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
)

// TestRepairNamesDamagedRecord: flycl repair of a journal whose record
// of version 2 is damaged in its features (a whole record after it) names
// that record's own version; and a 0-byte journal loads with a warning.
func TestRepairNamesDamagedRecord(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.flycl")
	st, err := Open(ctx, path, &Options{Checkpoints: Checkpoints{Entries: 100}, Command: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := deploy.New(cfg, 3, nil, nil)
	st.Create(m)
	var second int64
	for i, c := range []string{"a", "b", "c"} {
		if c == "b" {
			second = st.journal.Size()
		}
		if err := st.Update(ctx, learn(ctx, c, float32(i))); err != nil {
			t.Fatal(err)
		}
	}
	st.mu.Lock()
	st.journal.Close()
	st.mu.Unlock()
	st.lock.Unlock()
	jp := modelfile.JournalPath(path)
	b, err := os.ReadFile(jp)
	if err != nil {
		t.Fatal(err)
	}
	// the last feature byte of the record of version 2 (its header intact)
	n := int64(b[second]) | int64(b[second+1])<<8 | int64(b[second+2])<<16 | int64(b[second+3])<<24
	b[second+8+n-1] ^= 0x55
	if err := os.WriteFile(jp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, _, err := Repair(ctx, path, &Options{Command: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Reason, "the record of version 2, a learn") {
		t.Fatalf("repair's reason does not name the damaged record's version 2: %s", rep.Reason)
	}
	if err := os.Truncate(jp, 0); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Warnings) == 0 || !strings.Contains(strings.Join(got.Warnings, "\n"), "empty file") {
		t.Fatalf("a 0-byte journal loads without a warning: %v", got.Warnings)
	}
}
