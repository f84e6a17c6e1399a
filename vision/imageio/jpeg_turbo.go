//go:build cgo && !noturbojpeg

package imageio

/*
#cgo LDFLAGS: -lturbojpeg
#include <stdlib.h>
#include <turbojpeg.h>
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// JPEGDecoder names the JPEG decoder in use.
const JPEGDecoder = "libjpeg-turbo"

// decodeJPEG decodes with libjpeg-turbo's default (accurate integer IDCT,
// fancy upsampling) settings, which are PIL's.
func decodeJPEG(b []byte, d Decoder) (*RGB, error) {
	h := C.tjInitDecompress()
	if h == nil {
		return nil, fmt.Errorf("jpeg: cannot initialise libjpeg-turbo")
	}
	defer C.tjDestroy(h)
	src := (*C.uchar)(unsafe.Pointer(&b[0]))
	size := C.ulong(len(b))
	var w, ht, subsamp, cs C.int
	if C.tjDecompressHeader3(h, src, size, &w, &ht, &subsamp, &cs) != 0 {
		return nil, fmt.Errorf("jpeg: %s", C.GoString(C.tjGetErrorStr2(h)))
	}
	if err := d.check(int(w), int(ht)); err != nil {
		return nil, fmt.Errorf("jpeg: %w", err)
	}
	out := NewRGB(int(w), int(ht))
	n := int(w) * int(ht)
	switch cs {
	case C.TJCS_GRAY:
		gray := make([]uint8, n)
		if err := decompress(h, src, size, gray, w, ht, C.TJPF_GRAY); err != nil {
			return nil, err
		}
		for i, v := range gray {
			out.Pix[3*i], out.Pix[3*i+1], out.Pix[3*i+2] = v, v, v
		}
	case C.TJCS_CMYK, C.TJCS_YCCK:
		cmyk := make([]uint8, 4*n)
		if err := decompress(h, src, size, cmyk, w, ht, C.TJPF_CMYK); err != nil {
			return nil, err
		}
		inv := adobeMarker(b)
		for i := 0; i < n; i++ {
			out.Pix[3*i], out.Pix[3*i+1], out.Pix[3*i+2] = cmykToRGB(cmyk[4*i], cmyk[4*i+1], cmyk[4*i+2], cmyk[4*i+3], inv)
		}
	default:
		if err := decompress(h, src, size, out.Pix, w, ht, C.TJPF_RGB); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func decompress(h C.tjhandle, src *C.uchar, size C.ulong, dst []uint8, w, ht C.int, pf C.int) error {
	if C.tjDecompress2(h, src, size, (*C.uchar)(unsafe.Pointer(&dst[0])), w, 0, ht, pf, 0) != 0 {
		// Warnings (e.g. premature end of data) are errors here: a
		// truncated file must not silently give a partly grey image.
		return fmt.Errorf("jpeg: %s", C.GoString(C.tjGetErrorStr2(h)))
	}
	return nil
}

// jpegSize reads a JPEG's size from its header with libjpeg-turbo.
func jpegSize(b []byte) (w, h int, err error) {
	th := C.tjInitDecompress()
	if th == nil {
		return 0, 0, fmt.Errorf("cannot initialise libjpeg-turbo")
	}
	defer C.tjDestroy(th)
	var cw, ch, subsamp, cs C.int
	if C.tjDecompressHeader3(th, (*C.uchar)(unsafe.Pointer(&b[0])), C.ulong(len(b)), &cw, &ch, &subsamp, &cs) != 0 {
		return 0, 0, fmt.Errorf("%s", C.GoString(C.tjGetErrorStr2(th)))
	}
	return int(cw), int(ch), nil
}
