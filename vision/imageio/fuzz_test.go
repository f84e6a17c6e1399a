package imageio

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode: no encoded image may panic the decoders, exceed the pixel
// limit, or decode to a buffer that disagrees with its size.
func FuzzDecode(f *testing.F) {
	for _, pat := range []string{"testdata/*.png", "testdata/*.gif", "testdata/*.bmp", "testdata/*.tif", "testdata/*.webp", "testdata/*.p?m", "testdata/rgb_33x19_s2.jpg", "testdata/cmyk_30x20.jpg", "testdata/rgb_64x64_s2_prog.jpg"} {
		files, _ := filepath.Glob(pat)
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add(bigPNG(16000, 16000))
	const limit = 1 << 20
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decoder{MaxPixels: limit}.Decode(b)
		if err != nil {
			return
		}
		if m.W <= 0 || m.H <= 0 || int64(m.W)*int64(m.H) > limit || len(m.Pix) != 3*m.W*m.H {
			t.Fatalf("%d×%d image with %d bytes", m.W, m.H, len(m.Pix))
		}
	})
}

// FuzzDecodeBudget: the admission path of a decode with a Budget (the
// size read from the header, before decoding) never panics, counts
// exactly the pixels the image then decodes to, and gives them all back,
// whatever the bytes.
func FuzzDecodeBudget(f *testing.F) {
	for _, pat := range []string{"testdata/*.png", "testdata/*.gif", "testdata/*.bmp", "testdata/*.tif", "testdata/*.p?m", "testdata/rgb_33x19_s2.jpg", "testdata/cmyk_30x20.jpg"} {
		files, _ := filepath.Glob(pat)
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add(bigPNG(1000, 1000)) // a few hundred bytes for a megapixel
	const limit = 1 << 20
	f.Fuzz(func(t *testing.T, b []byte) {
		bud := NewBudget(limit / 2)
		d := Decoder{MaxPixels: limit, Budget: bud}
		m, err := d.DecodeContext(context.Background(), b)
		if bud.InUse() != 0 {
			t.Fatalf("%d pixels still held after the decode (err %v)", bud.InUse(), err)
		}
		if err != nil {
			return
		}
		w, h, err := d.Config(b)
		if err != nil || w != m.W || h != m.H {
			t.Fatalf("admitted %d×%d (%v), decoded %d×%d", w, h, err, m.W, m.H)
		}
		if want := min(int64(w)*int64(h), limit/2); bud.Peak() != want {
			t.Fatalf("peak %d pixels in flight for a %d×%d image, want %d", bud.Peak(), w, h, want)
		}
	})
}
