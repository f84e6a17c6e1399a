package imageio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/png"
	"os"
	"runtime"
	"testing"
)

// PIL's Image.MAX_IMAGE_PIXELS is int(1024*1024*1024 // 4 // 3); it warns
// above that and refuses (DecompressionBombError) above twice that
// (Image._decompression_bomb_check, Pillow 9.4).
func TestDefaultLimitIsPIL(t *testing.T) {
	if DefaultMaxPixels != 178956970 {
		t.Fatalf("DefaultMaxPixels = %d", DefaultMaxPixels)
	}
}

func allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// pngChunk appends a PNG chunk with its CRC.
func pngChunk(b []byte, typ string, data []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	c := append([]byte(typ), data...)
	b = append(b, c...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(c))
}

// bigPNG is a PNG header announcing a w×h 8-bit greyscale image followed
// by a little image data: decoding its pixels would allocate w*h bytes.
func bigPNG(w, h uint32) []byte {
	b := []byte("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 0, 0, 0, 0)
	b = pngChunk(b, "IHDR", ihdr)
	b = pngChunk(b, "IDAT", []byte{0x78, 0x9c, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01})
	return pngChunk(b, "IEND", nil)
}

// jpegWithSize patches the frame header (SOF) of a JPEG to announce w×h.
func jpegWithSize(t *testing.T, b []byte, w, h uint16) []byte {
	b = append([]byte{}, b...)
	for i := 2; i+9 < len(b); {
		m := b[i+1]
		if m >= 0xc0 && m <= 0xc2 {
			binary.BigEndian.PutUint16(b[i+5:], h)
			binary.BigEndian.PutUint16(b[i+7:], w)
			return b
		}
		i += 2 + int(binary.BigEndian.Uint16(b[i+2:]))
	}
	t.Fatal("no SOF marker")
	return nil
}

// Images above the limit are refused from their header, before any pixel
// is decoded; at the limit they decode.
func TestPixelLimit(t *testing.T) {
	var buf bytes.Buffer
	png.Encode(&buf, image.NewGray(image.Rect(0, 0, 100, 50)))
	small := buf.Bytes()
	jpg, err := os.ReadFile("testdata/rgb_83x52_s2.jpg")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		b    []byte
		max  int64
		ok   bool
	}{
		{"png at the limit", small, 5000, true},
		{"png over the limit", small, 4999, false},
		{"jpeg at the limit", jpg, 83 * 52, true},
		{"jpeg over the limit", jpg, 83*52 - 1, false},
		{"16000×16000 png header, default limit", bigPNG(16000, 16000), 0, false},
		{"20000×20000 jpeg header, default limit", jpegWithSize(t, jpg, 20000, 20000), 0, false},
		{"no limit", small, -1, true},
	} {
		var err error
		n := allocated(func() { _, err = Decoder{MaxPixels: c.max}.Decode(c.b) })
		if c.ok && err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if !c.ok && !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: %v, want ErrTooLarge", c.name, err)
		}
		if n > 4<<20 {
			t.Errorf("%s: allocated %d bytes", c.name, n)
		}
	}
	// the package-level Decode applies the default limit
	if _, err := Decode(bigPNG(16000, 16000)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Decode of a 16000×16000 header: %v", err)
	}
}

// PGM/PPM variants PIL reads differently (plain text, other maxvals) are
// errors, not wrong pixels; so are truncated files.
func TestPNMErrors(t *testing.T) {
	good, err := os.ReadFile("testdata/rgb_17x13.ppm")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"plain":     []byte("P3\n1 1\n255\n1 2 3\n"),
		"16-bit":    []byte("P5\n1 1\n65535\n\x00\x01"),
		"truncated": good[:len(good)-1],
		"zero size": []byte("P5\n0 1\n255\n"),
	} {
		if _, err := Decode(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := (Decoder{MaxPixels: 17*13 - 1}).Decode(good); !errors.Is(err, ErrTooLarge) {
		t.Errorf("limit: %v", err)
	}
}

// With no pixel limit, a PNM header's size must still not overflow.
func TestPNMNoLimitOverflow(t *testing.T) {
	b := []byte("P6\n99999999999 99999999999\n255\n\x00\x00\x00")
	if _, err := (Decoder{MaxPixels: -1}).Decode(b); err == nil {
		t.Error("no error")
	}
}
