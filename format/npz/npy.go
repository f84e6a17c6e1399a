package npz

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Header is a parsed .npy header.
type Header struct {
	Descr   string // e.g. "<f4"
	Fortran bool
	Shape   []int
	// Len is the number of bytes of the magic, version and dictionary:
	// the offset of the data in the .npy stream.
	Len int
}

var (
	reDescr   = regexp.MustCompile(`['"]descr['"]\s*:\s*['"]([^'"]+)['"]`)
	reFortran = regexp.MustCompile(`['"]fortran_order['"]\s*:\s*(True|False)`)
	reShape   = regexp.MustCompile(`['"]shape['"]\s*:\s*\(([^)]*)\)`)
)

// ReadHeader reads the magic, version and header dictionary of a .npy
// stream (versions 1, 2 and 3), leaving r at the start of the data. It
// accepts any spacing of the dictionary, as written by NumPy or by other
// tools. Dimensions must be non-negative; their product is not checked
// here (see Count).
func ReadHeader(r io.Reader) (*Header, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil || string(pre[:6]) != "\x93NUMPY" {
		return nil, fmt.Errorf("not a .npy array (bad magic)")
	}
	var n, hl int
	switch pre[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("truncated .npy header")
		}
		n, hl = int(binary.LittleEndian.Uint16(b[:])), 10
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("truncated .npy header")
		}
		if v := binary.LittleEndian.Uint32(b[:]); v > 1<<20 {
			return nil, fmt.Errorf(".npy header of %d bytes", v)
		} else {
			n, hl = int(v), 12
		}
	default:
		return nil, fmt.Errorf(".npy format version %d.%d not supported", pre[6], pre[7])
	}
	hb := make([]byte, n)
	if _, err := io.ReadFull(r, hb); err != nil {
		return nil, fmt.Errorf("truncated .npy header")
	}
	s := string(hb)
	h := &Header{Len: hl + n}
	m := reDescr.FindStringSubmatch(s)
	if m == nil {
		return nil, fmt.Errorf(".npy header has no descr: %q", trim(s))
	}
	h.Descr = m[1]
	if m := reFortran.FindStringSubmatch(s); m != nil {
		h.Fortran = m[1] == "True"
	}
	m = reShape.FindStringSubmatch(s)
	if m == nil {
		return nil, fmt.Errorf(".npy header has no shape: %q", trim(s))
	}
	for _, f := range strings.Split(m[1], ",") {
		f = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f), "L"))
		if f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 0 {
			return nil, fmt.Errorf(".npy header has a bad shape: (%s)", trim(m[1]))
		}
		h.Shape = append(h.Shape, v)
	}
	return h, nil
}

// trim shortens s for an error message.
func trim(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// Count returns the number of elements of shape, or an error if a
// dimension is negative or the product overflows an int.
func Count(shape []int) (int, error) {
	n := uint64(1)
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("shape %v has a negative dimension", shape)
		}
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > math.MaxInt {
			return 0, fmt.Errorf("shape %v: element count overflows", shape)
		}
		n = lo
	}
	return int(n), nil
}

// dtype is a parsed numpy type string of the kinds read here.
type dtype struct {
	order byte // '<' or '>' ('|' for one-byte and string types)
	kind  byte // 'f', 'i', 'u', 'b', 'U', 'S'
	size  int  // bytes per element
	width int  // characters, for 'U' and 'S'
}

func parseDtype(s string) (dtype, error) {
	var t dtype
	if s == "" {
		return t, fmt.Errorf("empty dtype")
	}
	t.order = '<'
	switch s[0] {
	case '<', '|', '=':
		s = s[1:]
	case '>':
		t.order = '>'
		s = s[1:]
	}
	if s == "" {
		return t, fmt.Errorf("bad dtype")
	}
	t.kind = s[0]
	n, err := strconv.Atoi(s[1:])
	if err != nil || n <= 0 {
		return t, fmt.Errorf("unsupported dtype")
	}
	switch t.kind {
	case 'f':
		if n != 2 && n != 4 && n != 8 {
			return t, fmt.Errorf("unsupported dtype")
		}
		t.size = n
	case 'i', 'u':
		if n != 1 && n != 2 && n != 4 && n != 8 {
			return t, fmt.Errorf("unsupported dtype")
		}
		t.size = n
	case 'b':
		if n != 1 {
			return t, fmt.Errorf("unsupported dtype")
		}
		t.size = 1
	case 'U':
		if n > math.MaxInt/4 {
			return t, fmt.Errorf("unsupported dtype")
		}
		t.width, t.size = n, 4*n
	case 'S':
		t.width, t.size = n, n
	default:
		return t, fmt.Errorf("unsupported dtype")
	}
	return t, nil
}

// dataSize returns the element count and byte size of an array, checking
// both for overflow.
func dataSize(h *Header, t dtype) (count, size int, err error) {
	count, err = Count(h.Shape)
	if err != nil {
		return 0, 0, err
	}
	hi, lo := bits.Mul64(uint64(count), uint64(t.size))
	if hi != 0 || lo > math.MaxInt {
		return 0, 0, fmt.Errorf("shape %v of %s: byte size overflows", h.Shape, h.Descr)
	}
	return count, int(lo), nil
}

// readRaw reads exactly size bytes from r, allocating only as the data
// arrives (1 MiB first, then doubling), so a header that claims more than
// the stream holds costs about twice the stream, not the claim.
func readRaw(r io.Reader, size int) ([]byte, error) {
	var b []byte
	for len(b) < size {
		need := min(size-len(b), max(len(b), 1<<20))
		b = slices.Grow(b, need)
		n, err := io.ReadFull(r, b[len(b):len(b)+need])
		b = b[:len(b)+n]
		if err != nil {
			return nil, err
		}
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// ReadFloat32NPY reads a float32 or float64 .npy array in C order,
// returning its values as float32 and its shape. Memory grows with the
// data actually read, never with what the header claims.
func ReadFloat32NPY(r io.Reader) ([]float32, []int, error) {
	h, err := ReadHeader(r)
	if err != nil {
		return nil, nil, err
	}
	if h.Fortran && len(h.Shape) > 1 {
		return nil, nil, fmt.Errorf(".npy array in Fortran order")
	}
	t, err := parseDtype(h.Descr)
	if err != nil || t.kind != 'f' || t.size == 2 {
		return nil, nil, fmt.Errorf(".npy dtype %s, want float32 or float64", h.Descr)
	}
	n, size, err := dataSize(h, t)
	if err != nil {
		return nil, nil, fmt.Errorf(".npy array: %w", err)
	}
	raw, err := readRaw(r, size)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf(".npy array is truncated (shape %v needs %d bytes of data)", h.Shape, size)
		}
		return nil, nil, err
	}
	return decodeFloat32(raw, t, n), h.Shape, nil
}

func order(t dtype) binary.ByteOrder {
	if t.order == '>' {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// float16 converts IEEE 754 half-precision bits to float32.
func float16(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Inf, NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0:
		if frac == 0 {
			return math.Float32frombits(sign)
		}
		// subnormal: value = frac * 2^-24
		v := float32(frac) / (1 << 24)
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

// decodeFloat32 converts n numeric elements of type t to float32.
func decodeFloat32(raw []byte, t dtype, n int) []float32 {
	out := make([]float32, n)
	bo := order(t)
	switch {
	case t.kind == 'f' && t.size == 4:
		for i := range out {
			out[i] = math.Float32frombits(bo.Uint32(raw[4*i:]))
		}
	case t.kind == 'f' && t.size == 8:
		for i := range out {
			out[i] = float32(math.Float64frombits(bo.Uint64(raw[8*i:])))
		}
	case t.kind == 'f' && t.size == 2:
		for i := range out {
			out[i] = float16(bo.Uint16(raw[2*i:]))
		}
	case t.kind == 'u' && t.size == 8:
		for i := range out {
			out[i] = float32(bo.Uint64(raw[8*i:]))
		}
	default:
		for i := range out {
			out[i] = float32(intAt(raw, t, bo, i))
		}
	}
	return out
}

// intAt returns integer (or bool) element i; u8 values above MaxInt64
// wrap, so callers check them with u64At.
func intAt(raw []byte, t dtype, bo binary.ByteOrder, i int) int64 {
	switch t.size {
	case 1:
		if t.kind == 'i' {
			return int64(int8(raw[i]))
		}
		return int64(raw[i])
	case 2:
		if t.kind == 'i' {
			return int64(int16(bo.Uint16(raw[2*i:])))
		}
		return int64(bo.Uint16(raw[2*i:]))
	case 4:
		if t.kind == 'i' {
			return int64(int32(bo.Uint32(raw[4*i:])))
		}
		return int64(bo.Uint32(raw[4*i:]))
	}
	return int64(bo.Uint64(raw[8*i:]))
}

// decodeStrings converts n fixed-width string elements, dropping the
// trailing NULs numpy pads with.
func decodeStrings(raw []byte, t dtype, n int) []string {
	out := make([]string, n)
	bo := order(t)
	var sb strings.Builder
	for i := range out {
		e := raw[i*t.size : (i+1)*t.size]
		if t.kind == 'S' {
			out[i] = strings.TrimRight(string(e), "\x00")
			continue
		}
		sb.Reset()
		end := t.width
		for end > 0 && bo.Uint32(e[4*(end-1):]) == 0 {
			end--
		}
		for j := 0; j < end; j++ {
			c := rune(bo.Uint32(e[4*j:]))
			if !utf8.ValidRune(c) {
				c = utf8.RuneError
			}
			sb.WriteRune(c)
		}
		out[i] = sb.String()
	}
	return out
}
