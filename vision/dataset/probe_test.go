package dataset

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	py "github.com/nlpodyssey/gopickle/types"

	"github.com/flycl/flycl/vision/imageio"
)

// storedTarGz writes files as a tar inside a gzip stream of stored
// (uncompressed) deflate blocks, so that a flipped data byte still
// inflates and only gzip's trailer CRC-32 can notice it.
func storedTarGz(t *testing.T, path string, files map[string][]byte, names ...string) []byte {
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.NoCompression)
	tw := tar.NewWriter(gz)
	for _, n := range names {
		tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg})
		tw.Write(files[n])
	}
	tw.Close()
	gz.Close()
	os.WriteFile(path, buf.Bytes(), 0o644)
	return buf.Bytes()
}

// A byte flipped inside a CIFAR .tar.gz (gzip's trailer CRC is the only
// check that covers it) must be an error, as it is for tar/gzip/Python.
func TestCorruptTarGz(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{}
	var names []string
	for _, n := range []string{"batches.meta.txt", "test_batch.bin"} {
		b, err := os.ReadFile(filepath.Join("testdata/cifar-10-batches-bin", n))
		if err != nil {
			t.Fatal(err)
		}
		files["cifar-10-batches-bin/"+n] = b
		names = append(names, "cifar-10-batches-bin/"+n)
	}
	p := filepath.Join(dir, "cifar-10-binary.tar.gz")
	b := storedTarGz(t, p, files, names...)
	if _, err := OpenCIFAR(CIFAR10, p, "test"); err != nil {
		t.Fatalf("intact archive: %v", err)
	}
	rec := files["cifar-10-batches-bin/test_batch.bin"]
	i := bytes.Index(b, rec[3073+100:3073+140]) // a pixel of the second record
	b[i+5] ^= 0x01
	os.WriteFile(p, b, 0o644)
	_, err := OpenCIFAR(CIFAR10, p, "test")
	if err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("flipped byte: %v, want an error naming the archive", err)
	}
	// the same for an image-folder archive
	png := pngBytes(t, 90)
	fp := filepath.Join(dir, "folder.tgz")
	fb := storedTarGz(t, fp, map[string][]byte{"x/train/a/1.png": png, "x/train/b/2.png": png}, "x/train/a/1.png", "x/train/b/2.png")
	j := bytes.LastIndex(fb, png[len(png)-30:])
	fb[j] ^= 0x01
	os.WriteFile(fp, fb, 0o644)
	if _, err := OpenTarFolder(fp, "train"); err == nil || !strings.Contains(err.Error(), fp) {
		t.Fatalf("flipped byte in a folder archive: %v", err)
	}
}

// A gzipped IDX file with a flipped byte, and an IDX header claiming more
// than the file holds (allocating nothing of that size).
func TestIDXCorruptAndClaims(t *testing.T) {
	dir := t.TempDir()
	raw := []byte{0, 0, 8, 1, 0, 0, 0, 200}
	for i := 0; i < 200; i++ {
		raw = append(raw, byte(i))
	}
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.NoCompression)
	gz.Write(raw)
	gz.Close()
	b := buf.Bytes()
	b[len(b)-8-50] ^= 0x01 // inside the data, before the trailer
	p := filepath.Join(dir, "labels-idx1-ubyte.gz")
	os.WriteFile(p, b, 0o644)
	if _, err := ReadIDX(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("flipped byte in gzipped IDX: %v", err)
	}
	hdr := []byte{0, 0, 8, 3}
	for _, d := range []uint32{1 << 12, 1 << 9, 1 << 10} { // 2^31 bytes claimed
		hdr = binary.BigEndian.AppendUint32(hdr, d)
	}
	q := filepath.Join(dir, "claims-idx3-ubyte")
	os.WriteFile(q, append(hdr, make([]byte, 1000)...), 0o644)
	var a, c runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	_, err := ReadIDX(q)
	runtime.ReadMemStats(&c)
	if err == nil || !strings.Contains(err.Error(), q) {
		t.Errorf("claimed size: %v", err)
	}
	if n := c.TotalAlloc - a.TotalAlloc; n > 8<<20 {
		t.Errorf("claimed size: allocated %d bytes for a 1 KB file", n)
	}
}

// A CIFAR pickle whose ndarray shape overflows when multiplied, and one
// whose string length claims more bytes than the file holds.
func TestCIFARPickleClaims(t *testing.T) {
	arr := &pyArray{}
	state := pyTuple(1, pyTuple(1<<54, 3072), "dtype", false, "")
	if err := arr.PySetState(state); err == nil {
		t.Error("shape (2^54, 3072) with no data: no error")
	}
	// BINUNICODE8 claiming 2^62 bytes
	pk := append([]byte("\x80\x04\x8d"), binary.LittleEndian.AppendUint64(nil, 1<<62)...)
	pk = append(pk, "abc."...)
	if _, err := unpickle("claims", pk); err == nil || !strings.Contains(err.Error(), "claims") {
		t.Errorf("string claiming 2^62 bytes: %v", err)
	}
}

func pyTuple(v ...any) *py.Tuple { return py.NewTupleFromSlice(v) }

// The folder indexer used to pick up .webp and .tif files that then failed
// to decode: TIFF is now decoded (PIL-exact, see imageio), WebP is skipped
// at indexing time and listed by Skipped for the caller's warning.
func TestFolderWebPAndTIFF(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("../imageio/testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	files := map[string][]byte{
		"train/a/1.tif": read("rgb_35x21.tif"), "train/a/2.webp": read("rgb_35x21.webp"),
		"train/b/3.png": read("gray16_31x29.png"), "train/b/4.TIF": read("gray_35x21.tif"),
	}
	root := t.TempDir()
	writeTree(t, root, files)
	arc := filepath.Join(t.TempDir(), "f.tar.gz")
	tarGz(t, arc, files)
	for _, open := range []func() (Dataset, error){
		func() (Dataset, error) { return OpenFolder(filepath.Join(root, "train")) },
		func() (Dataset, error) { return OpenTarFolder(arc, "train") },
	} {
		d, err := open()
		if err != nil {
			t.Fatal(err)
		}
		if d.Len() != 3 {
			t.Errorf("%d images, want 3 (WebP skipped)", d.Len())
		}
		if sk := Skipped(d); len(sk) != 1 || !strings.HasSuffix(sk[0], "2.webp") {
			t.Errorf("skipped %v, want the .webp", sk)
		}
		for i := 0; i < d.Len(); i++ {
			if _, err := d.Image(i); err != nil {
				t.Errorf("%s: %v", d.Path(i), err)
			}
		}
		// the pixel limit is an input: 35×21 = 735 pixels
		small := WithDecoder(d, imageio.Decoder{MaxPixels: 734})
		if _, err := small.Image(0); !errors.Is(err, imageio.ErrTooLarge) {
			t.Errorf("limit 734 on a 35×21 image: %v", err)
		}
		if _, err := d.Image(0); err != nil {
			t.Errorf("WithDecoder changed the original: %v", err)
		}
	}
}
