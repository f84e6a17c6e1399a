package modelfile

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestBackupPathNeverOverwrites: copies kept within one second get their
// own names (-2, -3, ...), so a second repair never writes over the first
// one's copy of the journal.
func TestBackupPathNeverOverwrites(t *testing.T) {
	jp := filepath.Join(t.TempDir(), "m.flycl.journal")
	now := time.Date(2026, 11, 28, 17, 58, 28, 0, time.UTC)
	want := []string{jp + ".broken-20261128T175828Z", jp + ".broken-20261128T175828Z-2", jp + ".broken-20261128T175828Z-3"}
	for i, w := range want {
		got := backupPath(jp, now.Add(time.Duration(i)*time.Millisecond))
		if got != w {
			t.Fatalf("copy %d: %s, want %s", i+1, got, w)
		}
		if err := os.WriteFile(got, []byte{byte(i)}, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := backupPath(jp, now.Add(time.Second)); got != jp+".broken-20261128T175829Z" {
		t.Errorf("a copy a second later: %s", got)
	}
	for i, w := range want {
		if b, err := os.ReadFile(w); err != nil || len(b) != 1 || b[0] != byte(i) {
			t.Errorf("%s: %v %v, want the copy written %d", w, b, err, i+1)
		}
	}
}
