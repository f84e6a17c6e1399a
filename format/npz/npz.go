package npz

import (
	"archive/zip"
	"bufio"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
	"strings"
)

// maxDeflateRatio bounds how much a deflate stream can expand: a stored
// block of 258-byte matches costs at least 2 bits per match, so about
// 1032:1 (zlib's technical notes).
const maxDeflateRatio = 1032

// Reader gives access to the arrays of one .npz file.
type Reader struct {
	path  string
	f     *os.File // nil for NewReader
	size  int64
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
	r, err := NewReader(f, st.Size(), path)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.f = f
	return r, nil
}

// NewReader reads an .npz archive of size bytes from ra; name is used in
// error messages. Close does not close ra.
func NewReader(ra io.ReaderAt, size int64, name string) (*Reader, error) {
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable .npz archive (truncated or corrupt?): %w", name, err)
	}
	r := &Reader{path: name, size: size, zr: zr, files: map[string]*zip.File{}}
	for _, zf := range zr.File {
		r.files[strings.TrimSuffix(zf.Name, ".npy")] = zf
	}
	return r, nil
}

// Close closes the file opened by Open.
func (r *Reader) Close() error {
	if r.f == nil {
		return nil
	}
	return r.f.Close()
}

// Keys returns the array names, sorted.
func (r *Reader) Keys() []string {
	k := make([]string, 0, len(r.files))
	for n := range r.files {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}

// MemberSize returns the size in bytes (.npy header included) that the
// zip directory gives array name: an upper bound on what reading it
// allocates, to check before reading a member that should be small.
func (r *Reader) MemberSize(name string) (int64, error) {
	zf, ok := r.files[name]
	if !ok {
		return 0, fmt.Errorf("%s: no array %q (has %s)", r.path, name, strings.Join(r.Keys(), ", "))
	}
	if zf.UncompressedSize64 > math.MaxInt64 {
		return 0, r.errf(name, "zip directory claims %d bytes", zf.UncompressedSize64)
	}
	return int64(zf.UncompressedSize64), nil
}

// Has reports whether the archive holds an array called name.
func (r *Reader) Has(name string) bool { _, ok := r.files[name]; return ok }

// member is an open array: its header, and a reader of its data that
// checks the CRC-32 at the end.
type member struct {
	zf   *zip.File
	rc   io.ReadCloser
	crc  *crcReader
	data io.Reader
	h    *Header
}

// crcReader computes the CRC-32 of what passes through it; Go's zip
// reader skips the check when the directory's CRC is 0, NumPy does not.
type crcReader struct {
	r   io.Reader
	sum uint32
}

func (c *crcReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.sum = crc32.Update(c.sum, crc32.IEEETable, p[:n])
	return n, err
}

func (r *Reader) errf(name, format string, a ...any) error {
	return fmt.Errorf("%s: array %q: %s", r.path, name, fmt.Sprintf(format, a...))
}

// open checks the directory entry of array name and reads its header.
func (r *Reader) open(name string) (*member, error) {
	zf, ok := r.files[name]
	if !ok {
		return nil, fmt.Errorf("%s: no array %q (has %s)", r.path, name, strings.Join(r.Keys(), ", "))
	}
	off, err := zf.DataOffset()
	if err != nil {
		return nil, r.errf(name, "%v", err)
	}
	if off < 0 || zf.CompressedSize64 > uint64(r.size) || uint64(off)+zf.CompressedSize64 > uint64(r.size) {
		return nil, r.errf(name, "member extends past the end of the %d-byte file (truncated?)", r.size)
	}
	switch zf.Method {
	case zip.Store:
		if zf.UncompressedSize64 != zf.CompressedSize64 {
			return nil, r.errf(name, "zip directory gives a stored member %d bytes compressed and %d uncompressed (corrupt)",
				zf.CompressedSize64, zf.UncompressedSize64)
		}
	case zip.Deflate:
		if zf.UncompressedSize64/maxDeflateRatio > zf.CompressedSize64+1 {
			return nil, r.errf(name, "zip directory claims %d bytes from %d deflated bytes, more than deflate can expand (corrupt)",
				zf.UncompressedSize64, zf.CompressedSize64)
		}
	}
	rc, err := zf.Open()
	if err != nil {
		return nil, r.errf(name, "%v", err)
	}
	m := &member{zf: zf, rc: rc, crc: &crcReader{r: rc}}
	br := bufio.NewReaderSize(m.crc, 64<<10)
	if m.h, err = ReadHeader(br); err != nil {
		rc.Close()
		return nil, r.errf(name, "bad .npy header: %v", err)
	}
	m.data = br
	return m, nil
}

// Shape returns the shape of array name.
func (r *Reader) Shape(name string) ([]int, error) {
	m, err := r.open(name)
	if err != nil {
		return nil, err
	}
	defer m.rc.Close()
	return slices.Clone(m.h.Shape), nil
}

// array is the raw data of one array, in C order.
type array struct {
	t     dtype
	shape []int
	n     int
	raw   []byte
}

// read reads array name whole: header, data, and the rest of the member
// to check its CRC-32.
func (r *Reader) read(name string) (*array, error) {
	m, err := r.open(name)
	if err != nil {
		return nil, err
	}
	defer m.rc.Close()
	h := m.h
	t, err := parseDtype(h.Descr)
	if err != nil {
		return nil, r.errf(name, "unsupported dtype %s", h.Descr)
	}
	n, size, err := dataSize(h, t)
	if err != nil {
		return nil, r.errf(name, "bad shape: %v", err)
	}
	avail := int64(m.zf.UncompressedSize64) - int64(h.Len)
	if int64(size) > avail {
		return nil, r.errf(name, "header claims shape %v of %s (%d bytes) but the member holds %d bytes of data (truncated or corrupt)",
			h.Shape, h.Descr, size, max(avail, 0))
	}
	raw := make([]byte, size)
	if _, err := io.ReadFull(m.data, raw); err != nil {
		return nil, r.dataErr(name, err)
	}
	if _, err := io.Copy(io.Discard, m.data); err != nil {
		return nil, r.dataErr(name, err)
	}
	if m.crc.sum != m.zf.CRC32 {
		return nil, r.errf(name, "bad CRC-32 (%08x, the zip directory says %08x): the file is corrupt", m.crc.sum, m.zf.CRC32)
	}
	if h.Fortran && len(h.Shape) > 1 {
		raw = toCOrder(raw, h.Shape, t.size)
	}
	return &array{t: t, shape: slices.Clone(h.Shape), n: n, raw: raw}, nil
}

func (r *Reader) dataErr(name string, err error) error {
	switch {
	case errors.Is(err, zip.ErrChecksum):
		return r.errf(name, "bad CRC-32: the file is corrupt")
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return r.errf(name, "data is truncated")
	}
	return r.errf(name, "%v", err)
}

// toCOrder reorders a Fortran-order (column-major) array of size-byte
// elements to C order.
func toCOrder(raw []byte, shape []int, size int) []byte {
	n := len(raw) / size
	out := make([]byte, len(raw))
	idx := make([]int, len(shape))
	for c := 0; c < n; c++ {
		f, stride := 0, 1
		for d := 0; d < len(shape); d++ {
			f += idx[d] * stride
			stride *= shape[d]
		}
		copy(out[c*size:(c+1)*size], raw[f*size:(f+1)*size])
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out
}

// Float32 reads array name as float32 (converting from any float, integer
// or bool dtype) and returns it with its shape.
func (r *Reader) Float32(name string) ([]float32, []int, error) {
	a, err := r.read(name)
	if err != nil {
		return nil, nil, err
	}
	if a.t.kind == 'U' || a.t.kind == 'S' {
		return nil, nil, r.errf(name, "holds strings, want numbers")
	}
	return decodeFloat32(a.raw, a.t, a.n), a.shape, nil
}

// Int64 reads array name as int64 (integers, or floats holding whole
// numbers) and returns it with its shape.
func (r *Reader) Int64(name string) ([]int64, []int, error) {
	a, err := r.read(name)
	if err != nil {
		return nil, nil, err
	}
	bo := order(a.t)
	out := make([]int64, a.n)
	switch a.t.kind {
	case 'U', 'S':
		return nil, nil, r.errf(name, "holds strings, want integers")
	case 'f':
		// floats holding whole numbers, as np.array([0., 1.]) labels do;
		// float64 ones only where every integer is exact (|x| <= 2^53)
		for i := range out {
			var x float64
			if a.t.size == 8 {
				x = math.Float64frombits(bo.Uint64(a.raw[8*i:]))
			} else if a.t.size == 4 {
				x = float64(math.Float32frombits(bo.Uint32(a.raw[4*i:])))
			} else {
				x = float64(float16(bo.Uint16(a.raw[2*i:])))
			}
			if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
				return nil, nil, r.errf(name, "element %d is %v, not an integer", i, x)
			}
			out[i] = int64(x)
		}
	default:
		for i := range out {
			if a.t.kind == 'u' && a.t.size == 8 && bo.Uint64(a.raw[8*i:]) > math.MaxInt64 {
				return nil, nil, r.errf(name, "element %d is %d, which overflows int64", i, bo.Uint64(a.raw[8*i:]))
			}
			out[i] = intAt(a.raw, a.t, bo, i)
		}
	}
	return out, a.shape, nil
}

// Strings reads the string array name.
func (r *Reader) Strings(name string) ([]string, []int, error) {
	a, err := r.read(name)
	if err != nil {
		return nil, nil, err
	}
	if a.t.kind != 'U' && a.t.kind != 'S' {
		return nil, nil, r.errf(name, "holds numbers, want strings")
	}
	return decodeStrings(a.raw, a.t, a.n), a.shape, nil
}
