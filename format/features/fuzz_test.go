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
	// and a file with a pipeline identity (the member flycl extract adds)
	withPipeline := filepath.Join(f.TempDir(), "pipeline.npz")
	if err := Save(withPipeline, &Set{X: []float32{1, 2, 3, 4}, N: 2, D: 2, Labels: []int{0, 1}, ClassNames: []string{"a", "b"},
		Pipeline: `{"backbone":"squeezenet","name":"squeezenet1_1","weights_hash":"ab12","output":"features","dim":2}`}); err != nil {
		f.Fatal(err)
	}
	for _, p := range append(files, withPipeline) {
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
