package npz

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// npyBytes builds a version 1.0 .npy array with the given header fields
// and raw data, as numpy.save lays it out.
func npyBytes(descr, shape string, data []byte) []byte {
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	total := 10 + len(dict) + 1
	dict += strings.Repeat(" ", (64-total%64)%64) + "\n"
	h := []byte("\x93NUMPY\x01\x00")
	h = binary.LittleEndian.AppendUint16(h, uint16(len(dict)))
	return append(append(h, dict...), data...)
}

type zmember struct {
	name   string
	data   []byte
	method uint16
}

// writeZip writes members to a new .npz file in dir and returns its path.
func writeZip(t testing.TB, dir, name string, members ...zmember) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m.name, Method: m.method})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(m.data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func f32Bytes(v ...float32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// allocated returns the bytes fn allocates.
func allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// A byte flipped inside a member's data must fail the zip CRC-32 check,
// as numpy refuses the file with "Bad CRC-32".
func TestCorruptMemberFailsCRC(t *testing.T) {
	dir := t.TempDir()
	for _, method := range []uint16{zip.Store, zip.Deflate} {
		vals := make([]float32, 1000)
		for i := range vals {
			vals[i] = float32(i)
		}
		p := writeZip(t, dir, fmt.Sprintf("m%d.npz", method), zmember{"x.npy", npyBytes("<f4", "(1000,)", f32Bytes(vals...)), method})
		b, _ := os.ReadFile(p)
		if method == zip.Store {
			i := bytes.Index(b, f32Bytes(500))
			b[i+1] ^= 0x40 // changes 500 to another float
		} else {
			// flip a bit in the middle of the deflate stream until it still
			// inflates to a member of the right length (the CRC is then the
			// only thing that can notice)
			b[len(b)/3] ^= 0x01
		}
		os.WriteFile(p, b, 0o644)
		r, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = r.Float32("x")
		r.Close()
		if err == nil {
			t.Fatalf("method %d: corrupt member read without error", method)
		}
		if !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), `"x"`) {
			t.Errorf("method %d: error %q does not name the file and the array", method, err)
		}
		if method == zip.Store && !strings.Contains(err.Error(), "CRC") {
			t.Errorf("stored member: %v, want a CRC error", err)
		}
	}
}

// Shapes whose element count overflows, or that claim far more data than
// the member holds, are errors naming the file and the array, and nothing
// of the claimed size is allocated.
func TestClaimedShapes(t *testing.T) {
	dir := t.TempDir()
	small := f32Bytes(make([]float32, 10240)...) // 40 KB, like the 41 KB file
	for _, c := range []struct{ file, descr, shape, want string }{
		{"overflow.npz", "<f4", "(4, 4611686018427387936)", "shape"},
		{"labels.npz", "<i8", "(4611686018427387904,)", "shape"},
		{"claims.npz", "<f4", "(700000, 768)", "holds"},
		{"huge.npz", "<f8", "(1000000, 1000000)", "holds"},
		{"strings.npz", "<U1000000000", "(4,)", "holds"},
		{"negative.npz", "<f4", "(-1, 3)", "shape"},
	} {
		p := writeZip(t, dir, c.file, zmember{"x.npy", npyBytes(c.descr, c.shape, small), zip.Store})
		r, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		var rerr error
		n := allocated(func() {
			if strings.HasPrefix(c.descr, "<U") {
				_, _, rerr = r.Strings("x")
			} else if c.descr == "<i8" {
				_, _, rerr = r.Int64("x")
			} else {
				_, _, rerr = r.Float32("x")
			}
		})
		r.Close()
		if rerr == nil || !strings.Contains(rerr.Error(), c.want) || !strings.Contains(rerr.Error(), p) || !strings.Contains(rerr.Error(), `"x"`) {
			t.Errorf("%s: %v, want %q naming the file and the array", c.file, rerr, c.want)
		}
		if n > 8<<20 {
			t.Errorf("%s: allocated %d bytes for a %d-byte member", c.file, n, len(small))
		}
	}
}

// A zip directory may itself lie about a member's size: a deflated member
// cannot expand more than deflate's maximum ratio, and a stored one is as
// long as its compressed size.
func TestForgedDirectorySize(t *testing.T) {
	dir := t.TempDir()
	data := npyBytes("<f4", "(1000000, 1000)", f32Bytes(make([]float32, 1000)...))
	p := writeZip(t, dir, "forged.npz", zmember{"x.npy", data, zip.Deflate})
	b, _ := os.ReadFile(p)
	// patch the uncompressed size (offset 24 in the central directory entry)
	cd := bytes.LastIndex(b, []byte("PK\x01\x02"))
	binary.LittleEndian.PutUint32(b[cd+24:], 4000000128)
	os.WriteFile(p, b, 0o644)
	r, err := Open(p)
	if err != nil {
		return // refusing the archive outright is fine too
	}
	defer r.Close()
	var rerr error
	n := allocated(func() { _, _, rerr = r.Float32("x") })
	if rerr == nil || !strings.Contains(rerr.Error(), p) {
		t.Errorf("forged size: %v", rerr)
	}
	if n > 8<<20 {
		t.Errorf("forged size: allocated %d bytes", n)
	}
}

func TestNPYClaimedShapes(t *testing.T) {
	for _, c := range []struct{ shape, want string }{
		{"(4611686018427387904,)", "shape"},
		{"(4, 4611686018427387936)", "shape"},
		{"(700000, 768)", "truncated"},
	} {
		b := npyBytes("<f4", c.shape, f32Bytes(make([]float32, 10240)...))
		var err error
		n := allocated(func() { _, _, err = ReadFloat32NPY(bytes.NewReader(b)) })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.shape, err, c.want)
		}
		if n > 8<<20 {
			t.Errorf("%s: allocated %d bytes for %d bytes of data", c.shape, n, len(b))
		}
	}
}

// Go's zip reader skips the CRC check when the directory's CRC-32 is 0;
// NumPy does not, and neither do we.
func TestZeroCRCIsChecked(t *testing.T) {
	dir := t.TempDir()
	p := writeZip(t, dir, "zero.npz", zmember{"x.npy", npyBytes("<f4", "(3,)", f32Bytes(1, 2, 3)), zip.Store})
	b, _ := os.ReadFile(p)
	lh := bytes.Index(b, []byte("PK\x03\x04"))
	cd := bytes.LastIndex(b, []byte("PK\x01\x02"))
	binary.LittleEndian.PutUint32(b[lh+14:], 0)
	binary.LittleEndian.PutUint32(b[cd+16:], 0)
	os.WriteFile(p, b, 0o644)
	r, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, _, err := r.Float32("x"); err == nil || !strings.Contains(err.Error(), "CRC") {
		t.Errorf("CRC forged to 0: %v", err)
	}
}

// Big-endian, half-precision, unsigned, byte-string and Fortran-order
// integer arrays written by NumPy (testdata/gen_more.py).
func TestReadMoreDtypes(t *testing.T) {
	r, err := Open("testdata/more.npz")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for name, want := range map[string][]float32{
		"f4be": {1.5, -2, 3.25}, "f8be": {1e-3, 2, -7.5, 1e10}, "i2be": {-300, 2, 32767},
		"u4": {0, 4e9}, "f2be": {0.5, -65504, 5.960464477539063e-08},
	} {
		got, _, err := r.Float32(name)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %v %v, want %v", name, got, err, want)
		}
	}
	if got, _, err := r.Int64("u4"); err != nil || !slices.Equal(got, []int64{0, 4000000000}) {
		t.Errorf("u4 as int64: %v %v", got, err)
	}
	if got, shape, err := r.Int64("fortran_i"); err != nil || !slices.Equal(shape, []int{3, 4}) || !slices.Equal(got, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}) {
		t.Errorf("fortran_i: %v %v %v", got, shape, err)
	}
	if got, _, err := r.Strings("bytes"); err != nil || !slices.Equal(got, []string{"ab", "", "xyz"}) {
		t.Errorf("bytes: %q %v", got, err)
	}
	if got, _, err := r.Strings("ube"); err != nil || !slices.Equal(got, []string{"héllo", "w"}) {
		t.Errorf("ube: %q %v", got, err)
	}
}
