//go:build !cgo || noturbojpeg

package imageio

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
)

// JPEGDecoder names the JPEG decoder in use. Built with the tag
// noturbojpeg, or without cgo, it is Go's
// image/jpeg, whose upsampling of 4:2:0 chroma differs from libjpeg-turbo
// (and so from PIL) by up to 97 levels on some pixels.
const JPEGDecoder = "image/jpeg (not PIL-exact)"

func decodeJPEG(b []byte, d Decoder) (*RGB, error) {
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("jpeg: %w", err)
	}
	if err := d.check(cfg.Width, cfg.Height); err != nil {
		return nil, fmt.Errorf("jpeg: %w", err)
	}
	im, err := jpeg.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("jpeg: %w", err)
	}
	if c, ok := im.(*image.CMYK); ok {
		inv := adobeMarker(b)
		bd := c.Bounds()
		out := NewRGB(bd.Dx(), bd.Dy())
		i := 0
		for y := bd.Min.Y; y < bd.Max.Y; y++ {
			for x := bd.Min.X; x < bd.Max.X; x++ {
				p := c.CMYKAt(x, y)
				// Go's decoder already undoes the Adobe inversion.
				out.Pix[i], out.Pix[i+1], out.Pix[i+2] = cmykToRGB(p.C, p.M, p.Y, p.K, false)
				_ = inv
				i += 3
			}
		}
		return out, nil
	}
	return toRGB(im), nil
}

// jpegSize reads a JPEG's size from its header.
func jpegSize(b []byte) (w, h int, err error) {
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(b))
	return cfg.Width, cfg.Height, err
}
