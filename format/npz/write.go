package npz

import (
	"archive/zip"
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/flycl/flycl/internal/atomicfile"
)

// Writer writes a .npz archive. Arrays are stored uncompressed, like
// numpy.savez. The file appears at its path only when Close succeeds
// (written to a temporary file, synced, then renamed), so an existing file
// is never left half-written.
type Writer struct {
	af  *atomicfile.File
	buf *bufio.Writer
	zw  *zip.Writer
	err error
}

// Create starts a new archive that will be written to path.
func Create(path string) (*Writer, error) {
	af, err := atomicfile.Create(path)
	if err != nil {
		return nil, err
	}
	buf := bufio.NewWriterSize(af, 1<<20)
	return &Writer{af: af, buf: buf, zw: zip.NewWriter(buf)}, nil
}

func shapeString(shape []int) string {
	parts := make([]string, len(shape))
	for i, s := range shape {
		parts[i] = strconv.Itoa(s)
	}
	if len(shape) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// header returns a version 1.0 .npy header padded to a multiple of 64 bytes.
func header(descr string, shape []int) []byte {
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shapeString(shape))
	total := 10 + len(dict) + 1
	pad := (64 - total%64) % 64
	dict += strings.Repeat(" ", pad) + "\n"
	h := make([]byte, 10, 10+len(dict))
	copy(h, "\x93NUMPY\x01\x00")
	binary.LittleEndian.PutUint16(h[8:], uint16(len(dict)))
	return append(h, dict...)
}

func (w *Writer) entry(name, descr string, shape []int, n int) (io.Writer, error) {
	if w.err != nil {
		return nil, w.err
	}
	if c, err := Count(shape); err != nil || c != n {
		w.err = fmt.Errorf("npz: array %q: shape %v does not hold %d values", name, shape, n)
		return nil, w.err
	}
	fw, err := w.zw.CreateHeader(&zip.FileHeader{Name: name + ".npy", Method: zip.Store})
	if err != nil {
		w.err = err
		return nil, err
	}
	if _, err := fw.Write(header(descr, shape)); err != nil {
		w.err = err
		return nil, err
	}
	return fw, nil
}

// Float32 adds a float32 array; shape defaults to (len(data),).
func (w *Writer) Float32(name string, data []float32, shape ...int) error {
	if len(shape) == 0 {
		shape = []int{len(data)}
	}
	fw, err := w.entry(name, "<f4", shape, len(data))
	if err != nil {
		return err
	}
	return w.words(fw, len(data), 4, func(b []byte, i int) { binary.LittleEndian.PutUint32(b, math.Float32bits(data[i])) })
}

// Int32 adds an int32 array.
func (w *Writer) Int32(name string, data []int32, shape ...int) error {
	if len(shape) == 0 {
		shape = []int{len(data)}
	}
	fw, err := w.entry(name, "<i4", shape, len(data))
	if err != nil {
		return err
	}
	return w.words(fw, len(data), 4, func(b []byte, i int) { binary.LittleEndian.PutUint32(b, uint32(data[i])) })
}

// Int64 adds an int64 array.
func (w *Writer) Int64(name string, data []int64, shape ...int) error {
	if len(shape) == 0 {
		shape = []int{len(data)}
	}
	fw, err := w.entry(name, "<i8", shape, len(data))
	if err != nil {
		return err
	}
	return w.words(fw, len(data), 8, func(b []byte, i int) { binary.LittleEndian.PutUint64(b, uint64(data[i])) })
}

// Strings adds a 1-D unicode array (NumPy dtype <U, UTF-32).
func (w *Writer) Strings(name string, data []string) error {
	width := 1
	for _, s := range data {
		width = max(width, utf8.RuneCountInString(s))
	}
	fw, err := w.entry(name, "<U"+strconv.Itoa(width), []int{len(data)}, len(data))
	if err != nil {
		return err
	}
	b := make([]byte, 4*width)
	for _, s := range data {
		clear(b)
		i := 0
		for _, r := range s {
			binary.LittleEndian.PutUint32(b[4*i:], uint32(r))
			i++
		}
		if _, err := fw.Write(b); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}

func (w *Writer) words(fw io.Writer, n, size int, put func([]byte, int)) error {
	const chunk = 1 << 14
	b := make([]byte, chunk*size)
	for lo := 0; lo < n; lo += chunk {
		hi := min(n, lo+chunk)
		for i := lo; i < hi; i++ {
			put(b[(i-lo)*size:], i)
		}
		if _, err := fw.Write(b[:(hi-lo)*size]); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}

// Close finishes the archive and moves it into place. After an error in
// any earlier call, Close removes the temporary file and leaves whatever
// was at the path untouched.
func (w *Writer) Close() error {
	if w.err == nil {
		w.err = w.zw.Close()
	}
	if w.err == nil {
		w.err = w.buf.Flush()
	}
	if w.err != nil {
		w.af.Abort()
		return w.err
	}
	return w.af.Commit()
}

// Abort discards the archive.
func (w *Writer) Abort() { w.af.Abort() }
