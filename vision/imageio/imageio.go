package imageio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"io"
	"os"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
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

// ErrTooLarge is returned for an image with more pixels than the
// decoder's limit; see Decoder.MaxPixels.
var ErrTooLarge = errors.New("image has more pixels than the limit")

// DefaultMaxPixels is PIL's limit: Image.MAX_IMAGE_PIXELS is
// 1024·1024·1024/4/3 = 89,478,485 pixels, above which PIL warns, and it
// refuses an image (DecompressionBombError) above twice that.
const DefaultMaxPixels = 2 * (1024 * 1024 * 1024 / 4 / 3)

// Decoder decodes images with explicit limits. The zero Decoder uses
// PIL's defaults.
type Decoder struct {
	// MaxPixels refuses images with more than this many pixels (width ×
	// height) with ErrTooLarge, from the size in their header, before any
	// pixel is decoded, as PIL refuses decompression bombs. 0 means
	// DefaultMaxPixels; a negative value means no limit.
	MaxPixels int64
	// Budget, when not nil, is shared with the decoders of other
	// goroutines: Decode admits an image against it with the pixels its
	// header announces and holds them while it decodes, so that however
	// many images are decoded at once, their pixels together stay within
	// the budget (see Budget).
	Budget *Budget
}

func (d Decoder) limit() int64 {
	if d.MaxPixels == 0 {
		return DefaultMaxPixels
	}
	return d.MaxPixels
}

// check refuses a w×h image above the limit.
func (d Decoder) check(w, h int) error {
	if w <= 0 || h <= 0 {
		return fmt.Errorf("image of %d×%d pixels", w, h)
	}
	if lim := d.limit(); lim >= 0 && (int64(w) > lim || int64(w)*int64(h) > lim) {
		return fmt.Errorf("%w: %d×%d = %d pixels, limit %d (PIL refuses it too; raise the limit to read it)",
			ErrTooLarge, w, h, int64(w)*int64(h), lim)
	}
	return nil
}

// DecodeFile decodes the image at path with the default limits.
func DecodeFile(path string) (*RGB, error) { return Decoder{}.DecodeFile(path) }

// Decode decodes an encoded image with the default limits (see
// Decoder.Decode).
func Decode(b []byte) (*RGB, error) { return Decoder{}.Decode(b) }

// DecodeReader reads all of r and decodes it with the default limits.
func DecodeReader(r io.Reader) (*RGB, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return Decode(b)
}

// DecodeFile decodes the image at path; errors name the file.
func (d Decoder) DecodeFile(path string) (*RGB, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := d.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	return m, nil
}

// Decode decodes an encoded image (JPEG, PNG, GIF, BMP, TIFF, or binary
// PGM/PPM with maxval 255, detected from the content) to RGB as PIL's convert("RGB") does. WebP is refused:
// Go has no decoder that matches libwebp's (PIL's) lossy upsampling.
func (d Decoder) Decode(b []byte) (*RGB, error) {
	return d.DecodeContext(context.Background(), b)
}

// DecodeContext is Decode, waiting for the decoder's Budget (when it has
// one) at most until ctx ends: it reads the image's size from its header
// (Config), takes that many pixels of the budget, decodes, and gives them
// back. An image the budget cannot admit before ctx ends is refused with
// an error wrapping ErrBudget, without decoding a pixel.
func (d Decoder) DecodeContext(ctx context.Context, b []byte) (*RGB, error) {
	if d.Budget == nil {
		return d.decode(b)
	}
	w, h, err := d.Config(b)
	if err != nil {
		return nil, err
	}
	n := int64(w) * int64(h)
	if err := d.Budget.Acquire(ctx, n); err != nil {
		return nil, err
	}
	defer d.Budget.Release(n)
	return d.decode(b)
}

// decode decodes b, ignoring the Budget.
func (d Decoder) decode(b []byte) (*RGB, error) {
	var config func(io.Reader) (image.Config, error)
	var decode func(io.Reader) (image.Image, error)
	var name string
	switch {
	case len(b) >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff:
		return decodeJPEG(b, d)
	case len(b) >= 8 && string(b[:8]) == "\x89PNG\r\n\x1a\n":
		name, config, decode = "png", png.DecodeConfig, png.Decode
	case len(b) >= 6 && (string(b[:6]) == "GIF87a" || string(b[:6]) == "GIF89a"):
		name, config, decode = "gif", gif.DecodeConfig, gif.Decode
	case len(b) >= 2 && string(b[:2]) == "BM":
		name, config, decode = "bmp", bmp.DecodeConfig, bmp.Decode
	case len(b) >= 4 && (string(b[:4]) == "II*\x00" || string(b[:4]) == "MM\x00*"):
		name, config, decode = "tiff", tiff.DecodeConfig, tiff.Decode
	case len(b) >= 3 && b[0] == 'P' && b[1] >= '1' && b[1] <= '6' && isSpace(b[2]):
		return decodePNM(b, d)
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return nil, fmt.Errorf("webp: %w (WebP is not supported: no decoder matches PIL's)", ErrFormat)
	default:
		return nil, ErrFormat
	}
	cfg, err := config(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := d.check(cfg.Width, cfg.Height); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	im, err := decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if bd := im.Bounds(); bd.Dx() != cfg.Width || bd.Dy() != cfg.Height {
		return nil, fmt.Errorf("%s: decoded %d×%d, header says %d×%d", name, bd.Dx(), bd.Dy(), cfg.Width, cfg.Height)
	}
	return toRGB(im), nil
}

// inPlaceRGB converts an 8-bit RGBA or NRGBA image whose rows are
// contiguous (as the decoders return them) to RGB in its own pixel
// buffer, as toRGB would, or returns nil: the image a decoder returns
// is garbage after the conversion, and a second buffer of 3 bytes a
// pixel beside its 4 would raise a large image's peak from 4 to 7 bytes
// a pixel. Pixel i's 3 bytes are written at 3i, below the 4i where it
// was read and below every pixel still to be read.
func inPlaceRGB(im image.Image) *RGB {
	var pix []uint8
	var premul bool
	var r image.Rectangle
	var stride int
	switch m := im.(type) {
	case *image.NRGBA:
		pix, r, stride = m.Pix, m.Rect, m.Stride
	case *image.RGBA:
		pix, r, stride, premul = m.Pix, m.Rect, m.Stride, true
	default:
		return nil
	}
	w, h := r.Dx(), r.Dy()
	if stride != 4*w || len(pix) < 4*w*h {
		return nil
	}
	n := w * h
	for i := range n {
		c := pix[4*i : 4*i+4 : 4*i+4]
		cr, cg, cb := c[0], c[1], c[2]
		if premul && c[3] != 255 {
			// opaque images only reach here in practice; un-premultiply otherwise
			nc := color.NRGBAModel.Convert(color.RGBA{cr, cg, cb, c[3]}).(color.NRGBA)
			cr, cg, cb = nc.R, nc.G, nc.B
		}
		pix[3*i], pix[3*i+1], pix[3*i+2] = cr, cg, cb
	}
	return &RGB{W: w, H: h, Pix: pix[: 3*n : 3*n]}
}

// toRGB converts like PIL's convert("RGB"): palette entries are looked up,
// grey is replicated, alpha is dropped (not composited), 16-bit colour
// samples keep their high byte as PIL's decoders do, and 16-bit grey is
// clipped to 255 as PIL's I -> RGB conversion does.
func toRGB(im image.Image) *RGB {
	if out := inPlaceRGB(im); out != nil {
		return out
	}
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
		// PIL opens 16-bit greyscale as mode I (PNG) or I;16 (TIFF) and
		// its conversion to RGB clips the value to 0..255, it does not
		// scale it (Convert.c, Pillow 9.4; testdata/gen_formats.py)
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				v := uint8(min(m.Gray16At(x, y).Y, 255))
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
