package imageio

import (
	"bytes"
	"fmt"
	"image"
	"image/gif"
	"image/png"
	"io"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
)

// Config reads the width and height of an encoded image (any format
// Decode reads) from its header, without decoding a pixel, and refuses an
// image above the decoder's pixel limit with ErrTooLarge, as Decode would.
// It lets a caller bound the pixels of many images before decoding any.
func (d Decoder) Config(b []byte) (w, h int, err error) {
	var config func(io.Reader) (image.Config, error)
	var name string
	switch {
	case len(b) >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff:
		w, h, err := jpegSize(b)
		if err != nil {
			return 0, 0, fmt.Errorf("jpeg: %w", err)
		}
		if err := d.check(w, h); err != nil {
			return 0, 0, fmt.Errorf("jpeg: %w", err)
		}
		return w, h, nil
	case len(b) >= 8 && string(b[:8]) == "\x89PNG\r\n\x1a\n":
		name, config = "png", png.DecodeConfig
	case len(b) >= 6 && (string(b[:6]) == "GIF87a" || string(b[:6]) == "GIF89a"):
		name, config = "gif", gif.DecodeConfig
	case len(b) >= 2 && string(b[:2]) == "BM":
		name, config = "bmp", bmp.DecodeConfig
	case len(b) >= 4 && (string(b[:4]) == "II*\x00" || string(b[:4]) == "MM\x00*"):
		name, config = "tiff", tiff.DecodeConfig
	case len(b) >= 3 && b[0] == 'P' && b[1] >= '1' && b[1] <= '6' && isSpace(b[2]):
		_, w, h, _, err := pnmHeader(b)
		if err != nil {
			return 0, 0, fmt.Errorf("pnm: %w", err)
		}
		if err := d.check(w, h); err != nil {
			return 0, 0, fmt.Errorf("pnm: %w", err)
		}
		return w, h, nil
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return 0, 0, fmt.Errorf("webp: %w (WebP is not supported: no decoder matches PIL's)", ErrFormat)
	default:
		return 0, 0, ErrFormat
	}
	cfg, err := config(bytes.NewReader(b))
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", name, err)
	}
	if err := d.check(cfg.Width, cfg.Height); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", name, err)
	}
	return cfg.Width, cfg.Height, nil
}
