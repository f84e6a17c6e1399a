package watch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/flycl/flycl/vision/imageio"
)

// ppm encodes img as a binary PPM frame.
func ppm(img *imageio.RGB) []byte {
	return append([]byte(fmt.Sprintf("P6\n%d %d\n255\n", img.W, img.H)), img.Pix...)
}

// pattern is a w×h image whose bytes depend on seed and position.
func pattern(w, h, seed int) *imageio.RGB {
	img := imageio.NewRGB(w, h)
	for i := range img.Pix {
		img.Pix[i] = uint8(i*7 + seed*31)
	}
	return img
}

func TestReaderFrames(t *testing.T) {
	frames := []*imageio.RGB{pattern(4, 3, 1), pattern(4, 3, 2), pattern(2, 5, 3), pattern(1, 1, 4)}
	var stream []byte
	for _, f := range frames {
		stream = append(stream, ppm(f)...)
	}
	// headers written otherwise: comments, other whitespace
	stream = append(stream, []byte("P6 # a comment\n3\t2\r\n255 ")...)
	last := pattern(3, 2, 5)
	stream = append(stream, last.Pix...)
	frames = append(frames, last)

	r := NewReader(bytes.NewReader(stream), 100)
	var buf *imageio.RGB
	for i, want := range frames {
		got, err := r.Next(buf)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if got.W != want.W || got.H != want.H || !bytes.Equal(got.Pix, want.Pix) {
			t.Fatalf("frame %d: got %d×%d, want %d×%d (or other pixels)", i, got.W, got.H, want.W, want.H)
		}
		if i == 1 && &got.Pix[0] != &buf.Pix[0] {
			t.Fatal("a frame of the same size was not read into the buffer given")
		}
		buf = got
	}
	if _, err := r.Next(buf); err != io.EOF {
		t.Fatalf("after the last frame: %v, want io.EOF", err)
	}
}

// TestReaderTruncated cuts a two-frame stream at every length: the
// reader returns the complete frames, then io.EOF exactly when the cut
// falls between frames and an io.ErrUnexpectedEOF error otherwise.
func TestReaderTruncated(t *testing.T) {
	a, b := ppm(pattern(3, 2, 1)), ppm(pattern(2, 2, 2))
	stream := append(append([]byte{}, a...), b...)
	for n := 0; n <= len(stream); n++ {
		r := NewReader(bytes.NewReader(stream[:n]), 0)
		complete := 0
		var err error
		for {
			if _, err = r.Next(nil); err != nil {
				break
			}
			complete++
		}
		wantComplete := 0
		if n >= len(a) {
			wantComplete++
		}
		if n == len(stream) {
			wantComplete++
		}
		boundary := n == 0 || n == len(a) || n == len(stream)
		switch {
		case complete != wantComplete:
			t.Fatalf("cut at %d: %d frames, want %d", n, complete, wantComplete)
		case boundary && err != io.EOF:
			t.Fatalf("cut at %d (between frames): %v, want io.EOF", n, err)
		case !boundary && !errors.Is(err, io.ErrUnexpectedEOF):
			t.Fatalf("cut at %d (inside a frame): %v, want io.ErrUnexpectedEOF", n, err)
		}
	}
}

func TestReaderBadInput(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     error
	}{
		{"P5 grey", "P5\n1 1\n255\n\x00", ErrFormat},
		{"text", "hello", ErrFormat},
		{"maxval 65535", "P6\n1 1\n65535\n\x00\x00\x00\x00\x00\x00", ErrFormat},
		{"zero width", "P6\n0 1\n255\n", ErrFormat},
		{"negative", "P6\n-1 1\n255\n", ErrFormat},
		{"long number", "P6\n1234567890 1\n255\n", ErrFormat},
		{"no space after maxval", "P6\n1 1\n255x", ErrFormat},
		// a header claiming 10^18 bytes must fail before any allocation
		{"huge", "P6\n999999999 999999999\n255\n", ErrFrameTooLarge},
		{"over the limit", "P6\n101 100\n255\n", ErrFrameTooLarge},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewReader(strings.NewReader(c.in), 100*100).Next(nil)
			if !errors.Is(err, c.want) {
				t.Fatalf("%q: %v, want %v", c.in, err, c.want)
			}
		})
	}
}

// FuzzReader: any bytes give frames of consistent size within the limit
// or an error, never a panic; a stream the reader reads to io.EOF as one
// frame is the same image for imageio's PPM decoder (PIL's reading, an
// implementation of its own).
func FuzzReader(f *testing.F) {
	f.Add(ppm(pattern(2, 2, 1)))
	f.Add(append(ppm(pattern(1, 3, 2)), ppm(pattern(3, 1, 3))...))
	f.Add([]byte("P6 #c\n2 1\n255\n\x01\x02\x03\x04\x05\x06"))
	f.Add([]byte("P6\n999999999 999999999\n255\n"))
	f.Add([]byte("P6\n2 2\n255\n\x00"))
	const limit = 1 << 12
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReader(bytes.NewReader(b), limit)
		var frames []*imageio.RGB
		var err error
		for len(frames) < 64 {
			var img *imageio.RGB
			if img, err = r.Next(nil); err != nil {
				break
			}
			if img.W <= 0 || img.H <= 0 || img.W*img.H > limit || len(img.Pix) != 3*img.W*img.H {
				t.Fatalf("frame %d×%d with %d bytes (limit %d pixels)", img.W, img.H, len(img.Pix), limit)
			}
			frames = append(frames, img)
		}
		if err == io.EOF && len(frames) == 1 {
			dec, derr := imageio.Decode(b)
			if derr != nil {
				t.Fatalf("read as one frame, imageio refuses it: %v", derr)
			}
			if dec.W != frames[0].W || dec.H != frames[0].H || !bytes.Equal(dec.Pix, frames[0].Pix) {
				t.Fatal("imageio decodes another image")
			}
		}
	})
}
