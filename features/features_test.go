package features

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	s := &Set{X: []float32{1, 2, 3, 4, 5, 6}, N: 3, D: 2, Labels: []int{2, 0, 2},
		Paths: []string{"a.jpg", "b.jpg", "c.jpg"}, ClassNames: []string{"cat", "dog", "emu"}, ExtractSeconds: 1.5}
	p := filepath.Join(t.TempDir(), "f.npz")
	if err := Save(p, s); err != nil {
		t.Fatal(err)
	}
	b, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b.X, s.X) || !slices.Equal(b.Labels, s.Labels) || !slices.Equal(b.Paths, s.Paths) ||
		!slices.Equal(b.ClassNames, s.ClassNames) || b.ExtractSeconds != 1.5 || b.N != 3 || b.D != 2 {
		t.Fatalf("round trip: %+v", b)
	}
	if !slices.Equal(b.Classes(), []int{0, 2}) {
		t.Errorf("classes %v", b.Classes())
	}
	x, l, idx := b.Subset([]int{2})
	if !slices.Equal(x, []float32{1, 2, 5, 6}) || !slices.Equal(l, []int{2, 2}) || !slices.Equal(idx, []int{0, 2}) {
		t.Errorf("subset %v %v %v", x, l, idx)
	}
	f := b.FirstPerClass(1)
	if f.N != 2 || !slices.Equal(f.Labels, []int{2, 0}) || f.ExtractSeconds != 1.0 {
		t.Errorf("first per class %+v", f)
	}
}

// Feature files written by NumPy (testdata/gen.py): the format another
// framework would produce, and files that are wrong in each way.
func TestLoadNumPyFiles(t *testing.T) {
	s, err := Load("testdata/good.npz")
	if err != nil {
		t.Fatal(err)
	}
	if s.N != 4 || s.D != 3 || !slices.Equal(s.Labels, []int{0, 1, 1, 5}) || s.X[11] != 11 {
		t.Errorf("%+v", s)
	}
	for file, want := range map[string]string{
		"nan.npz":          "is NaN",
		"labels_short.npz": "\"labels\" has shape [3]",
		"features_1d.npz":  "want (N, d)",
		"no_labels.npz":    "no array \"labels\"",
		"neg_label.npz":    "labels[1] = -1",
		"frac_label.npz":   "not an integer",
		"truncated.npz":    "truncated",
	} {
		_, err := Load(filepath.Join("testdata", file))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), file) {
			t.Errorf("%s: %v, want %q and the file name", file, err, want)
		}
	}
}

func TestSaveRejectsBadSets(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.npz")
	os.WriteFile(p, []byte("keep"), 0o644)
	for _, s := range []*Set{
		{X: []float32{1, 2}, N: 1, D: 2, Labels: []int{0, 1}},
		{X: []float32{1, 2}, N: 2, D: 2, Labels: []int{0, 1}},
		{X: []float32{1, float32(0) / zero()}, N: 1, D: 2, Labels: []int{0}},
	} {
		if err := Save(p, s); err == nil {
			t.Errorf("%+v: no error", s)
		}
	}
	if b, _ := os.ReadFile(p); string(b) != "keep" {
		t.Error("a failed save changed the file")
	}
}

func zero() float32 { return 0 }
