package imageio

import (
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
