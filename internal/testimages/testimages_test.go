package testimages

import (
	"bytes"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
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

// TestWriteFolder: per files of each class, named as returned, each
// decoding (by its extension's format) to the size drawn.
func TestWriteFolder(t *testing.T) {
	dir := t.TempDir()
	for _, ext := range []string{"png", "jpg"} {
		names, err := WriteFolder(filepath.Join(dir, ext), []string{"discs", "checks"}, 3, 24, ext, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"discs/00." + ext, "discs/01." + ext, "discs/02." + ext, "checks/00." + ext, "checks/01." + ext, "checks/02." + ext}
		if !slices.Equal(names, want) {
			t.Fatalf("%s: names %v, want %v", ext, names, want)
		}
		for _, n := range names {
			f, err := os.Open(filepath.Join(dir, ext, filepath.FromSlash(n)))
			if err != nil {
				t.Fatal(err)
			}
			img, format, err := image.Decode(f)
			f.Close()
			if err != nil || map[string]string{"png": "png", "jpg": "jpeg"}[ext] != format || img.Bounds().Dx() != 24 {
				t.Errorf("%s: %v, format %q, %v", n, err, format, img)
			}
		}
	}
	if _, err := WriteFolder(dir, []string{"nope"}, 1, 8, "png", rand.New(rand.NewPCG(1, 2))); err == nil {
		t.Error("an unknown pattern was drawn")
	}
}
