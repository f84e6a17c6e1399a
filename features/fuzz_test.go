package features

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRead: no feature file may panic the reader, and a file that loads
// is valid.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.npz")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Read(bytes.NewReader(b), int64(len(b)), "fuzz.npz")
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("loaded an invalid set: %v", err)
		}
		for i := 0; i < s.N; i++ {
			_ = s.Row(i)
		}
	})
}
