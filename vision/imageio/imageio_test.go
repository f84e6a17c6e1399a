package imageio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"codeberg.org/sbinet/npyio/npy"
)

// readNPY reads a uint8 H×W×3 array written by NumPy.
func readNPY(t *testing.T, path string) (h, w int, pix []uint8) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := npy.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Read(&pix); err != nil {
		t.Fatal(err)
	}
	s := r.Header.Descr.Shape
	return s[0], s[1], pix
}

// TestDecodeMatchesPIL compares every decoded fixture with what PIL's
// Image.open(f).convert("RGB") gave (testdata/gen.py): JPEG 4:4:4, 4:2:2,
// 4:2:0, progressive, greyscale and Adobe CMYK; PNG RGB, RGBA, grey and
// palette; GIF; BMP. JPEGs must match exactly with libjpeg-turbo.
func TestDecodeMatchesPIL(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.rgb.npy")
	if len(files) < 10 {
		t.Fatalf("only %d fixtures", len(files))
	}
	for _, ref := range files {
		src := strings.TrimSuffix(ref, ".rgb.npy")
		img, err := DecodeFile(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		h, w, want := readNPY(t, ref)
		if img.W != w || img.H != h {
			t.Fatalf("%s: %d×%d, PIL %d×%d", src, img.W, img.H, w, h)
		}
		maxd, n := 0, 0
		for i := range want {
			d := int(img.Pix[i]) - int(want[i])
			if d < 0 {
				d = -d
			}
			if d > 0 {
				n++
			}
			maxd = max(maxd, d)
		}
		exact := JPEGDecoder == "libjpeg-turbo" || !strings.HasSuffix(src, ".jpg")
		if exact && maxd != 0 {
			t.Errorf("%s: %d values differ from PIL (max %d)", src, n, maxd)
		}
		if !exact {
			t.Logf("%s with %s: max difference %d levels", src, JPEGDecoder, maxd)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	good, err := os.ReadFile("testdata/rgb_83x52_s2.jpg")
	if err != nil {
		t.Fatal(err)
	}
	png, _ := os.ReadFile("testdata/rgb_37x23.png")
	for name, data := range map[string][]byte{
		"empty":          nil,
		"text":           []byte("hello, world"),
		"truncated jpeg": good[:len(good)/2],
		"corrupt jpeg":   append(append([]byte{}, good[:200]...), make([]byte, 300)...),
		"truncated png":  png[:len(png)/2],
	} {
		if _, err := Decode(data); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "bad.jpg")
	os.WriteFile(p, good[:100], 0o644)
	if _, err := DecodeFile(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("error should name the file: %v", err)
	}
}
