package features

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"
)

// TestLoadDir: a folder's two files, each as Load reads it; a folder
// without its test file is an error naming the missing file.
func TestLoadDir(t *testing.T) {
	dir := t.TempDir()
	tr := &Set{X: []float32{1, 2, 3, 4}, Labels: []int{0, 1}, N: 2, D: 2}
	te := &Set{X: []float32{5, 6}, Labels: []int{1}, N: 1, D: 2}
	if err := Save(filepath.Join(dir, TrainFile), tr); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadDir(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no %s: %v, want not-exist", TestFile, err)
	}
	if err := Save(filepath.Join(dir, TestFile), te); err != nil {
		t.Fatal(err)
	}
	gtr, gte, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gtr.X, tr.X) || !slices.Equal(gtr.Labels, tr.Labels) || !slices.Equal(gte.X, te.X) || !slices.Equal(gte.Labels, te.Labels) {
		t.Errorf("read back %+v / %+v", gtr, gte)
	}
}
