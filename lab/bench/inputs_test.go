package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/vision/backbone"
)

func saveSet(t *testing.T, path string, n int) {
	t.Helper()
	s := &features.Set{D: 2, N: n}
	for i := 0; i < n; i++ {
		s.X = append(s.X, float32(i), 1)
		s.Labels = append(s.Labels, i%2)
	}
	if err := features.Save(path, s); err != nil {
		t.Fatal(err)
	}
}

// TestLoadCameraSets: a folder with test.npz gives both sets; one
// without needs --shots for its name; bad specs and shots are errors
// quoting them.
func TestLoadCameraSets(t *testing.T) {
	both, only := t.TempDir(), t.TempDir()
	saveSet(t, filepath.Join(both, features.TrainFile), 6)
	saveSet(t, filepath.Join(both, features.TestFile), 4)
	saveSet(t, filepath.Join(only, features.TrainFile), 8)

	sets, err := LoadCameraSets([]string{"a=" + both, "b=" + only}, []string{"b=3", "zzz=1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 2 || sets[0].Name != "a" || sets[0].Train.N != 6 || sets[0].Test == nil || sets[0].Test.N != 4 || sets[0].Shots != 0 ||
		sets[1].Name != "b" || sets[1].Train.N != 8 || sets[1].Test != nil || sets[1].Shots != 3 {
		t.Fatalf("sets %+v", sets)
	}
	for _, c := range []struct {
		specs, shots []string
		err          string
	}{
		{[]string{"b=" + only}, nil, "has no test.npz: give --shots b=N"},
		{[]string{"b=" + only}, []string{"b=0"}, "give --shots b=N"},
		{[]string{"a=" + both}, []string{"a=-1"}, `--shots "a=-1"`},
		{[]string{"a=" + both}, []string{"a"}, `--shots "a"`},
		{[]string{"a=" + both}, []string{"a=x"}, `--shots "a=x"`},
		{[]string{"nodir"}, nil, `--features "nodir"`},
		{[]string{"c=" + filepath.Join(only, "none")}, nil, "none"},
	} {
		if _, err := LoadCameraSets(c.specs, c.shots); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%v %v: %v, want %q", c.specs, c.shots, err, c.err)
		}
	}
	// a test.npz that exists but is unreadable is an error, not "absent"
	bad := t.TempDir()
	saveSet(t, filepath.Join(bad, features.TrainFile), 4)
	if err := os.WriteFile(filepath.Join(bad, features.TestFile), []byte("not npz"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCameraSets([]string{"x=" + bad}, []string{"x=1"}); err == nil {
		t.Error("corrupt test.npz: no error")
	}
}

// TestServeImages: the .JPEG and .jpg files of the folder, sorted, and
// nothing else (compared with a listing made here); fewer than 40 is an
// error.
func TestServeImages(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i := 0; i < 45; i++ {
		ext := []string{".JPEG", ".jpg", ".png", ".jpeg"}[i%4]
		p := filepath.Join(dir, fmt.Sprintf("%02d%s", i, ext))
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if ext == ".JPEG" || ext == ".jpg" {
			want = append(want, p)
		}
	}
	if _, err := ServeImages(dir); err == nil || !strings.Contains(err.Error(), "found 23") {
		t.Fatalf("23 images: %v", err)
	}
	for i := 45; len(want) < 40; i++ {
		p := filepath.Join(dir, fmt.Sprintf("%02d.jpg", i))
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	slices.Sort(want)
	got, err := ServeImages(dir)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("ServeImages = %v, %v; want %v", got, err, want)
	}
}

func TestParsePrecisions(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []backbone.Precision
		err  string
	}{
		{"fp32,int8", []backbone.Precision{backbone.FP32, backbone.INT8}, ""},
		{" int8 , fp32,int8", []backbone.Precision{backbone.INT8, backbone.FP32, backbone.INT8}, ""},
		{"", []backbone.Precision{backbone.FP32}, ""}, // "" is fp32, as --precision of extract
		{"fp32,fp16", nil, `--precision: unknown precision "fp16"`},
	} {
		got, err := ParsePrecisions(c.in)
		if (err != nil) != (c.err != "") || err != nil && !strings.Contains(err.Error(), c.err) || !slices.Equal(got, c.want) {
			t.Errorf("ParsePrecisions(%q) = %v, %v; want %v, %q", c.in, got, err, c.want, c.err)
		}
	}
}
