// Package npz reads and writes NumPy .npz archives (and the .npy arrays
// inside them) holding the numeric arrays Fly-CL exchanges with other
// tools: feature matrices, labels, projection matrices and file paths.
//
// Reading is done by codeberg.org/sbinet/npyio, which understands every
// NumPy header variant; numeric data of any integer or float dtype is
// converted to the type asked for. Writing is done here, because npyio
// writes multi-dimensional arrays only as float64 and through reflection
// (about 15 times slower on a 5000×768 float32 matrix).
package npz

import (
	"archive/zip"
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"codeberg.org/sbinet/npyio/npy"
	"codeberg.org/sbinet/npyio/npy/float16"
)

// Reader gives access to the arrays of one .npz file.
type Reader struct {
	path  string
	f     *os.File
	zr    *zip.Reader
	files map[string]*zip.File
}

// Open opens the .npz archive at path.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	zr, err := zip.NewReader(f, st.Size())
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: not a readable .npz archive (truncated or corrupt?): %w", path, err)
	}
	r := &Reader{path: path, f: f, zr: zr, files: map[string]*zip.File{}}
	for _, zf := range zr.File {
		r.files[strings.TrimSuffix(zf.Name, ".npy")] = zf
	}
	return r, nil
}

// Close closes the archive.
func (r *Reader) Close() error { return r.f.Close() }

// Keys returns the array names, sorted.
func (r *Reader) Keys() []string {
	k := make([]string, 0, len(r.files))
	for n := range r.files {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}

// Has reports whether the archive holds an array called name.
func (r *Reader) Has(name string) bool { _, ok := r.files[name]; return ok }

// open returns a npy reader positioned at the data of array name.
func (r *Reader) open(name string) (*npy.Reader, io.Closer, error) {
	zf, ok := r.files[name]
	if !ok {
		return nil, nil, fmt.Errorf("%s: no array %q (has %s)", r.path, name, strings.Join(r.Keys(), ", "))
	}
	rc, err := zf.Open()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: array %q: %w", r.path, name, err)
	}
	nr, err := npy.NewReader(bufio.NewReaderSize(rc, 1<<20))
	if err != nil {
		rc.Close()
		return nil, nil, fmt.Errorf("%s: array %q: bad .npy header: %w", r.path, name, err)
	}
	return nr, rc, nil
}

// Shape returns the shape of array name.
func (r *Reader) Shape(name string) ([]int, error) {
	nr, c, err := r.open(name)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return slices.Clone(nr.Header.Descr.Shape), nil
}

func count(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

// readAs reads array name into a slice of the on-disk type, returning it
// with the shape and dtype kind (e.g. "<f4").
func (r *Reader) read(name string) (any, []int, error) {
	nr, c, err := r.open(name)
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	h := nr.Header.Descr
	typ := strings.Trim(h.Type, "'\"")
	if len(typ) > 0 && (typ[0] == '<' || typ[0] == '|' || typ[0] == '=') {
		typ = typ[1:]
	}
	var v any
	switch {
	case typ == "f4":
		var s []float32
		err = nr.Read(&s)
		v = s
	case typ == "f8":
		var s []float64
		err = nr.Read(&s)
		v = s
	case typ == "f2":
		var s []float16.Num
		err = nr.Read(&s)
		f := make([]float32, len(s))
		for i, x := range s {
			f[i] = x.Float32()
		}
		v = f
	case typ == "i1", typ == "i2", typ == "i4", typ == "i8", typ == "u1", typ == "u2", typ == "u4", typ == "u8", typ == "b1":
		v, err = readInts(nr, typ)
	case strings.HasPrefix(typ, "U"), strings.HasPrefix(typ, "S"):
		var s []string
		err = nr.Read(&s)
		v = s
	default:
		return nil, nil, fmt.Errorf("%s: array %q has unsupported dtype %s", r.path, name, h.Type)
	}
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf("%s: array %q is truncated", r.path, name)
		}
		return nil, nil, fmt.Errorf("%s: array %q: %w", r.path, name, err)
	}
	if h.Fortran && len(h.Shape) > 1 {
		v = toCOrder(v, h.Shape)
	}
	return v, slices.Clone(h.Shape), nil
}

// toCOrder reorders a Fortran-order (column-major) array to C order.
func toCOrder(v any, shape []int) any {
	n := count(shape)
	perm := make([]int, n) // perm[c] = Fortran index of C index c
	idx := make([]int, len(shape))
	for c := 0; c < n; c++ {
		f, stride := 0, 1
		for d := 0; d < len(shape); d++ {
			f += idx[d] * stride
			stride *= shape[d]
		}
		perm[c] = f
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	switch s := v.(type) {
	case []float32:
		out := make([]float32, len(s))
		for c, f := range perm {
			out[c] = s[f]
		}
		return out
	case []float64:
		out := make([]float64, len(s))
		for c, f := range perm {
			out[c] = s[f]
		}
		return out
	case []int64:
		out := make([]int64, len(s))
		for c, f := range perm {
			out[c] = s[f]
		}
		return out
	}
	return v
}

func readInts(nr *npy.Reader, typ string) ([]int64, error) {
	conv := func(n int, at func(int) int64) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = at(i)
		}
		return out
	}
	switch typ {
	case "i1":
		var s []int8
		err := nr.Read(&s)
		return conv(len(s), func(i int) int64 { return int64(s[i]) }), err
	case "i2":
		var s []int16
		err := nr.Read(&s)
		return conv(len(s), func(i int) int64 { return int64(s[i]) }), err
	case "i4":
		var s []int32
		err := nr.Read(&s)
		return conv(len(s), func(i int) int64 { return int64(s[i]) }), err
	case "i8":
		var s []int64
		err := nr.Read(&s)
		return s, err
	case "u1":
		var s []uint8
		err := nr.Read(&s)
		return conv(len(s), func(i int) int64 { return int64(s[i]) }), err
	case "u2":
		var s []uint16
		err := nr.Read(&s)
		return conv(len(s), func(i int) int64 { return int64(s[i]) }), err
	case "u4":
		var s []uint32
		err := nr.Read(&s)
		return conv(len(s), func(i int) int64 { return int64(s[i]) }), err
	case "b1":
		var s []bool
		err := nr.Read(&s)
		return conv(len(s), func(i int) int64 {
			if s[i] {
				return 1
			}
			return 0
		}), err
	default: // u8
		var s []uint64
		err := nr.Read(&s)
		for _, v := range s {
			if v > math.MaxInt64 {
				return nil, fmt.Errorf("value %d overflows int64", v)
			}
		}
		return conv(len(s), func(i int) int64 { return int64(s[i]) }), err
	}
}

// Float32 reads array name as float32 (converting from any float or
// integer dtype) and returns it with its shape.
func (r *Reader) Float32(name string) ([]float32, []int, error) {
	v, shape, err := r.read(name)
	if err != nil {
		return nil, nil, err
	}
	var out []float32
	switch s := v.(type) {
	case []float32:
		out = s
	case []float64:
		out = make([]float32, len(s))
		for i, x := range s {
			out[i] = float32(x)
		}
	case []int64:
		out = make([]float32, len(s))
		for i, x := range s {
			out[i] = float32(x)
		}
	default:
		return nil, nil, fmt.Errorf("%s: array %q holds strings, want numbers", r.path, name)
	}
	if len(out) != count(shape) {
		return nil, nil, fmt.Errorf("%s: array %q is truncated: %d of %d values", r.path, name, len(out), count(shape))
	}
	return out, shape, nil
}

// Int64 reads array name as int64 (integers, or floats holding whole
// numbers) and returns it with its shape.
func (r *Reader) Int64(name string) ([]int64, []int, error) {
	v, shape, err := r.read(name)
	if err != nil {
		return nil, nil, err
	}
	var out []int64
	switch s := v.(type) {
	case []int64:
		out = s
	case []float32:
		out = make([]int64, len(s))
		for i, x := range s {
			if x != float32(math.Trunc(float64(x))) {
				return nil, nil, fmt.Errorf("%s: array %q element %d is %v, not an integer", r.path, name, i, x)
			}
			out[i] = int64(x)
		}
	case []float64:
		out = make([]int64, len(s))
		for i, x := range s {
			if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
				return nil, nil, fmt.Errorf("%s: array %q element %d is %v, not an integer", r.path, name, i, x)
			}
			out[i] = int64(x)
		}
	default:
		return nil, nil, fmt.Errorf("%s: array %q holds strings, want integers", r.path, name)
	}
	if len(out) != count(shape) {
		return nil, nil, fmt.Errorf("%s: array %q is truncated: %d of %d values", r.path, name, len(out), count(shape))
	}
	return out, shape, nil
}

// Strings reads the string array name.
func (r *Reader) Strings(name string) ([]string, []int, error) {
	v, shape, err := r.read(name)
	if err != nil {
		return nil, nil, err
	}
	s, ok := v.([]string)
	if !ok {
		return nil, nil, fmt.Errorf("%s: array %q holds numbers, want strings", r.path, name)
	}
	return s, shape, nil
}
