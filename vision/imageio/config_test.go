package imageio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfig: for every test image Decode reads, Config gives the size
// of the decoded image, and with a limit one pixel below it refuses the
// image with ErrTooLarge, as Decode does.
func TestConfig(t *testing.T) {
	files, _ := filepath.Glob("testdata/*")
	n := 0
	for _, p := range files {
		if strings.HasSuffix(p, ".npy") || strings.HasSuffix(p, ".py") {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m, derr := Decode(b)
		w, h, cerr := Decoder{}.Config(b)
		if derr != nil {
			if errors.Is(derr, ErrFormat) && !errors.Is(cerr, ErrFormat) {
				t.Errorf("%s: Decode: %v, Config: %v", p, derr, cerr)
			}
			continue
		}
		n++
		if cerr != nil || w != m.W || h != m.H {
			t.Errorf("%s: Config %d×%d (%v), decoded %d×%d", p, w, h, cerr, m.W, m.H)
			continue
		}
		if _, _, err := (Decoder{MaxPixels: int64(w*h - 1)}).Config(b); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: Config with a limit of %d pixels: %v, want ErrTooLarge", p, w*h-1, err)
		}
	}
	if n < 8 {
		t.Fatalf("only %d test images decoded", n)
	}
}

// FuzzConfig: Config never panics, never passes an image above the limit,
// and agrees with Decode on the size of every image Decode reads.
func FuzzConfig(f *testing.F) {
	files, _ := filepath.Glob("testdata/*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && !strings.HasSuffix(p, ".npy") && !strings.HasSuffix(p, ".py") {
			f.Add(b)
		}
	}
	const limit = 1 << 20
	f.Fuzz(func(t *testing.T, b []byte) {
		d := Decoder{MaxPixels: limit}
		w, h, err := d.Config(b)
		if err != nil {
			return
		}
		if w <= 0 || h <= 0 || int64(w)*int64(h) > limit {
			t.Fatalf("Config: %d×%d", w, h)
		}
		if m, err := d.Decode(b); err == nil && (m.W != w || m.H != h) {
			t.Fatalf("Config %d×%d, Decode %d×%d", w, h, m.W, m.H)
		}
	})
}
