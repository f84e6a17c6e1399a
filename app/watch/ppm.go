package watch

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/flycl/flycl/vision/imageio"
)

// ErrFormat is returned (wrapped) for frame bytes that are not binary PPM
// (P6, maxval 255).
var ErrFormat = errors.New("watch: not a binary PPM frame")

// ErrFrameTooLarge is returned (wrapped) for a frame whose header claims
// more pixels than the reader's limit; nothing of its size is allocated.
var ErrFrameTooLarge = errors.New("watch: frame larger than the limit")

// DefaultMaxPixels bounds a frame's width × height when a Reader is given
// no limit (a frame is 3 bytes per pixel: 48 MiB at this limit).
const DefaultMaxPixels = 1 << 24

// Reader reads a stream of binary PPM (P6) frames, as ffmpeg writes them
// with "-f image2pipe -c:v ppm": each frame is a short text header (P6,
// width, height, 255) followed by width×height×3 bytes of RGB. The header
// gives every frame its size, so a stream whose resolution changes is
// read correctly. Memory is bounded by the frame limit: a frame's pixels
// are read into the buffer the caller passes back (Next(dst)), never into
// one sized by a header beyond MaxPixels.
type Reader struct {
	r         *bufio.Reader
	maxPixels int
	frames    int
}

// NewReader returns a Reader of r whose frames have at most maxPixels
// pixels (≤ 0: DefaultMaxPixels).
func NewReader(r io.Reader, maxPixels int) *Reader {
	if maxPixels <= 0 {
		maxPixels = DefaultMaxPixels
	}
	return &Reader{r: bufio.NewReaderSize(r, 64<<10), maxPixels: maxPixels}
}

// Next reads the next frame into dst (its Pix reused when large enough;
// dst may be nil) and returns it. At the end of the stream between frames
// it returns io.EOF; a stream that ends inside a frame gives an error
// wrapping io.ErrUnexpectedEOF.
func (r *Reader) Next(dst *imageio.RGB) (*imageio.RGB, error) {
	w, h, err := r.header()
	if err != nil {
		return nil, err
	}
	n := 3 * w * h
	if dst == nil {
		dst = &imageio.RGB{}
	}
	if cap(dst.Pix) < n {
		dst.Pix = make([]uint8, n)
	}
	dst.W, dst.H, dst.Pix = w, h, dst.Pix[:n]
	if _, err := io.ReadFull(r.r, dst.Pix); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("watch: frame %d (%d×%d) pixels: %w", r.frames, w, h, err)
	}
	r.frames++
	return dst, nil
}

// header parses "P6 <w> <h> 255" and the single whitespace byte after it.
func (r *Reader) header() (w, h int, err error) {
	var magic [2]byte
	if _, err := io.ReadFull(r.r, magic[:]); err != nil {
		if err == io.EOF {
			return 0, 0, io.EOF
		}
		return 0, 0, fmt.Errorf("watch: frame %d header: %w", r.frames, io.ErrUnexpectedEOF)
	}
	if magic != [2]byte{'P', '6'} {
		return 0, 0, fmt.Errorf("%w: frame %d starts with %q, want \"P6\"", ErrFormat, r.frames, magic[:])
	}
	if c, err := r.r.ReadByte(); err != nil {
		return 0, 0, fmt.Errorf("watch: frame %d header: %w", r.frames, io.ErrUnexpectedEOF)
	} else if !isSpace(c) {
		return 0, 0, fmt.Errorf("%w: frame %d: no whitespace after \"P6\"", ErrFormat, r.frames)
	}
	var v [3]int
	for k := range v {
		if v[k], err = r.number(); err != nil {
			return 0, 0, fmt.Errorf("watch: frame %d header: %w", r.frames, err)
		}
	}
	if v[2] != 255 {
		return 0, 0, fmt.Errorf("%w: frame %d has maxval %d, want 255 (8-bit RGB)", ErrFormat, r.frames, v[2])
	}
	if v[0] > r.maxPixels || v[1] > r.maxPixels/v[0] {
		return 0, 0, fmt.Errorf("%w: frame %d is %d×%d, the limit is %d pixels", ErrFrameTooLarge, r.frames, v[0], v[1], r.maxPixels)
	}
	return v[0], v[1], nil
}

// number skips whitespace and # comments, then reads a positive decimal
// number of at most 9 digits and the one whitespace byte that ends it.
func (r *Reader) number() (int, error) {
	c, err := r.r.ReadByte()
	for err == nil && (isSpace(c) || c == '#') {
		if c == '#' {
			for err == nil && c != '\n' && c != '\r' {
				c, err = r.r.ReadByte()
			}
			continue
		}
		c, err = r.r.ReadByte()
	}
	n, digits := 0, 0
	for err == nil && c >= '0' && c <= '9' {
		if digits++; digits > 9 {
			return 0, fmt.Errorf("%w: a header number has more than 9 digits", ErrFormat)
		}
		n = 10*n + int(c-'0')
		c, err = r.r.ReadByte()
	}
	switch {
	case err == io.EOF:
		return 0, io.ErrUnexpectedEOF
	case err != nil:
		return 0, err
	case digits == 0 || !isSpace(c):
		return 0, fmt.Errorf("%w: unexpected byte %q in the header", ErrFormat, c)
	case n == 0:
		return 0, fmt.Errorf("%w: a zero in the header", ErrFormat)
	}
	return n, nil
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}
