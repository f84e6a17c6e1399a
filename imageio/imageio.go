package imageio

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"io"
	"os"

	"golang.org/x/image/bmp"
)

// RGB is an 8-bit RGB image, row-major, 3 bytes per pixel.
type RGB struct {
	W, H int
	Pix  []uint8
}

// NewRGB returns a black w×h image.
func NewRGB(w, h int) *RGB { return &RGB{W: w, H: h, Pix: make([]uint8, 3*w*h)} }

// At returns the pixel at (x, y).
func (m *RGB) At(x, y int) (r, g, b uint8) {
	i := 3 * (y*m.W + x)
	return m.Pix[i], m.Pix[i+1], m.Pix[i+2]
}

// ErrFormat is returned for data that is not an image format we read.
var ErrFormat = errors.New("unknown image format")

// DecodeFile decodes the image at path.
func DecodeFile(path string) (*RGB, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := Decode(b)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	return m, nil
}

// Decode decodes an encoded image (JPEG, PNG, GIF or BMP, detected from
// the content) to RGB.
func Decode(b []byte) (*RGB, error) {
	switch {
	case len(b) >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff:
		return decodeJPEG(b)
	case len(b) >= 8 && string(b[:8]) == "\x89PNG\r\n\x1a\n":
		im, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("png: %w", err)
		}
		return toRGB(im), nil
	case len(b) >= 6 && (string(b[:6]) == "GIF87a" || string(b[:6]) == "GIF89a"):
		im, err := gif.Decode(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("gif: %w", err)
		}
		return toRGB(im), nil
	case len(b) >= 2 && string(b[:2]) == "BM":
		im, err := bmp.Decode(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("bmp: %w", err)
		}
		return toRGB(im), nil
	}
	return nil, ErrFormat
}

// DecodeReader reads all of r and decodes it.
func DecodeReader(r io.Reader) (*RGB, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return Decode(b)
}

// toRGB converts like PIL's convert("RGB"): palette entries are looked up,
// grey is replicated, alpha is dropped (not composited), and 16-bit
// samples keep their high byte as PIL's PNG decoder does.
func toRGB(im image.Image) *RGB {
	b := im.Bounds()
	out := NewRGB(b.Dx(), b.Dy())
	i := 0
	put := func(r, g, bl uint8) {
		out.Pix[i], out.Pix[i+1], out.Pix[i+2] = r, g, bl
		i += 3
	}
	switch m := im.(type) {
	case *image.NRGBA:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				c := m.NRGBAAt(x, y)
				put(c.R, c.G, c.B)
			}
		}
	case *image.NRGBA64:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				c := m.NRGBA64At(x, y)
				put(uint8(c.R>>8), uint8(c.G>>8), uint8(c.B>>8))
			}
		}
	case *image.Gray:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				v := m.GrayAt(x, y).Y
				put(v, v, v)
			}
		}
	case *image.Gray16:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				v := uint8(m.Gray16At(x, y).Y >> 8)
				put(v, v, v)
			}
		}
	case *image.Paletted:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				c := color.NRGBAModel.Convert(m.Palette[m.ColorIndexAt(x, y)]).(color.NRGBA)
				put(c.R, c.G, c.B)
			}
		}
	case *image.RGBA:
		// opaque images only reach here in practice; un-premultiply otherwise
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				c := color.NRGBAModel.Convert(m.RGBAAt(x, y)).(color.NRGBA)
				put(c.R, c.G, c.B)
			}
		}
	default:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				c := color.NRGBAModel.Convert(im.At(x, y)).(color.NRGBA)
				put(c.R, c.G, c.B)
			}
		}
	}
	return out
}

// adobeTransform reports whether a JPEG carries an Adobe APP14 marker,
// which makes PIL read CMYK data as inverted ("CMYK;I").
func adobeMarker(b []byte) bool {
	i := 2
	for i+4 <= len(b) {
		if b[i] != 0xff {
			return false
		}
		marker := b[i+1]
		if marker == 0xda || marker == 0xd9 { // start of scan / end of image
			return false
		}
		n := int(b[i+2])<<8 | int(b[i+3])
		if marker == 0xee && n >= 7 && i+9 <= len(b) && string(b[i+4:i+9]) == "Adobe" {
			return true
		}
		i += 2 + n
	}
	return false
}

// cmykToRGB is PIL's cmyk2rgb (Convert.c) after optional inversion.
func cmykToRGB(c, m, y, k uint8, inverted bool) (uint8, uint8, uint8) {
	if inverted {
		c, m, y, k = 255-c, 255-m, 255-y, 255-k
	}
	nk := 255 - int(k)
	f := func(v uint8) uint8 {
		t := int(v)*nk + 128
		r := nk - ((t>>8)+t)>>8
		if r < 0 {
			return 0
		}
		if r > 255 {
			return 255
		}
		return uint8(r)
	}
	return f(c), f(m), f(y)
}
