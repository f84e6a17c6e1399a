package features

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl/format/npz"
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

// TestPipelineMember: the pipeline identity round-trips; a "pipeline"
// member that is not one string, is empty, or is larger than an identity
// may be (checked from the zip directory before it is read) is refused
// naming the file and the member; files without one load with none.
func TestPipelineMember(t *testing.T) {
	dir := t.TempDir()
	base := func() *Set { return &Set{X: []float32{1, 2, 3, 4}, N: 2, D: 2, Labels: []int{0, 1}} }
	s := base()
	s.Pipeline = `{"backbone":"squeezenet","weights_hash":"ab12"}`
	p := filepath.Join(dir, "p.npz")
	if err := Save(p, s); err != nil {
		t.Fatal(err)
	}
	if b, err := Load(p); err != nil || b.Pipeline != s.Pipeline {
		t.Fatalf("round trip: %v %q", err, b.Pipeline)
	}
	if b, err := Load("testdata/good.npz"); err != nil || b.Pipeline != "" {
		t.Fatalf("file without a pipeline: %v %q", err, b.Pipeline)
	}
	raw := func(name string, write func(w *npz.Writer)) string {
		path := filepath.Join(dir, name)
		w, err := npz.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w.Float32("features", []float32{1, 2, 3, 4}, 2, 2)
		w.Int64("labels", []int64{0, 1})
		write(w)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, tc := range []struct {
		name, want string
		write      func(w *npz.Writer)
	}{
		{"two.npz", "want one string", func(w *npz.Writer) { w.Strings("pipeline", []string{"{}", "{}"}) }},
		{"empty.npz", "is empty", func(w *npz.Writer) { w.Strings("pipeline", []string{""}) }},
		{"numbers.npz", "want strings", func(w *npz.Writer) { w.Float32("pipeline", []float32{1}) }},
		{"huge.npz", "more than a pipeline identity", func(w *npz.Writer) {
			w.Strings("pipeline", []string{strings.Repeat("x", MaxPipelineLen+2000)})
		}},
	} {
		path := raw(tc.name, tc.write)
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%s: %v, want %q and the file name", tc.name, err, tc.want)
		}
	}
	s = base()
	s.Pipeline = strings.Repeat("x", MaxPipelineLen+1)
	if err := Save(filepath.Join(dir, "big.npz"), s); err == nil {
		t.Error("saved a pipeline identity larger than a reader accepts")
	}
}
