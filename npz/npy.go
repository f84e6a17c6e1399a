package npz

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Header is a parsed .npy header.
type Header struct {
	Descr   string // e.g. "<f4"
	Fortran bool
	Shape   []int
}

var (
	reDescr   = regexp.MustCompile(`['"]descr['"]\s*:\s*['"]([^'"]+)['"]`)
	reFortran = regexp.MustCompile(`['"]fortran_order['"]\s*:\s*(True|False)`)
	reShape   = regexp.MustCompile(`['"]shape['"]\s*:\s*\(([^)]*)\)`)
)

// ReadHeader reads the magic, version and header dictionary of a .npy
// stream (versions 1, 2 and 3), leaving r at the start of the data. It
// accepts any spacing of the dictionary, as written by NumPy or by other
// tools.
func ReadHeader(r io.Reader) (*Header, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil || string(pre[:6]) != "\x93NUMPY" {
		return nil, fmt.Errorf("not a .npy array (bad magic)")
	}
	var n int
	switch pre[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("truncated .npy header")
		}
		n = int(binary.LittleEndian.Uint16(b[:]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("truncated .npy header")
		}
		n = int(binary.LittleEndian.Uint32(b[:]))
	default:
		return nil, fmt.Errorf(".npy format version %d.%d not supported", pre[6], pre[7])
	}
	if n > 1<<20 {
		return nil, fmt.Errorf(".npy header of %d bytes", n)
	}
	hb := make([]byte, n)
	if _, err := io.ReadFull(r, hb); err != nil {
		return nil, fmt.Errorf("truncated .npy header")
	}
	s := string(hb)
	h := &Header{}
	m := reDescr.FindStringSubmatch(s)
	if m == nil {
		return nil, fmt.Errorf(".npy header has no descr: %q", s)
	}
	h.Descr = m[1]
	if m := reFortran.FindStringSubmatch(s); m != nil {
		h.Fortran = m[1] == "True"
	}
	m = reShape.FindStringSubmatch(s)
	if m == nil {
		return nil, fmt.Errorf(".npy header has no shape: %q", s)
	}
	for _, f := range strings.Split(m[1], ",") {
		f = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f), "L"))
		if f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 0 {
			return nil, fmt.Errorf(".npy header has a bad shape: %q", m[1])
		}
		h.Shape = append(h.Shape, v)
	}
	return h, nil
}

// ReadFloat32NPY reads a little-endian float32 or float64 .npy array in C
// order, returning its values as float32 and its shape.
func ReadFloat32NPY(r io.Reader) ([]float32, []int, error) {
	h, err := ReadHeader(r)
	if err != nil {
		return nil, nil, err
	}
	if h.Fortran && len(h.Shape) > 1 {
		return nil, nil, fmt.Errorf(".npy array in Fortran order")
	}
	n := 1
	for _, d := range h.Shape {
		n *= d
	}
	size := map[string]int{"<f4": 4, "<f8": 8, "=f4": 4, "=f8": 8}[h.Descr]
	if size == 0 {
		return nil, nil, fmt.Errorf(".npy dtype %s, want little-endian float32 or float64", h.Descr)
	}
	raw := make([]byte, size*n)
	if _, err := io.ReadFull(r, raw); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf(".npy array is truncated (shape %v)", h.Shape)
		}
		return nil, nil, err
	}
	out := make([]float32, n)
	for i := range out {
		if size == 4 {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		} else {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:])))
		}
	}
	return out, h.Shape, nil
}
