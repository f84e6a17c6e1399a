package testimages

import (
	"bytes"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDraw: every pattern draws a picture of the size asked; two draws of
// one pattern differ (layout and jitter); an unknown pattern is an error;
// the encodings decode to the same size; ForClass names known patterns.
func TestDraw(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, p := range Patterns {
		a, err := Draw(p, 40, r)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Draw(p, 40, r)
		if a.Bounds().Dx() != 40 || a.Bounds().Dy() != 40 || bytes.Equal(a.Pix, b.Pix) {
			t.Fatalf("%s: bounds %v, two draws equal: %v", p, a.Bounds(), bytes.Equal(a.Pix, b.Pix))
		}
		for ext, dec := range map[string]func(io.Reader) (image.Image, error){"png": png.Decode, "jpg": jpeg.Decode} {
			enc, err := Encode(a, ext)
			if err != nil {
				t.Fatal(err)
			}
			img, err := dec(bytes.NewReader(enc))
			if err != nil || img.Bounds().Dx() != 40 {
				t.Fatalf("%s as %s: %v", p, ext, err)
			}
		}
	}
	if _, err := Draw("clouds", 8, r); err == nil {
		t.Fatal("an unknown pattern drew")
	}
	for c, p := range ForClass {
		if !slices.Contains(Patterns, p) {
			t.Errorf("ForClass[%s] = %q, not a pattern", c, p)
		}
	}
}
