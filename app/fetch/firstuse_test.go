package fetch

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// files of each type, written by the standard library (the independent
// truth for the magic checks), and a safetensors file by its format:
// an 8-byte little-endian header length, the JSON header, the data.
func typedFiles(t *testing.T) map[FileType][]byte {
	t.Helper()
	out := map[FileType][]byte{}
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, _ := zw.Create("features.npy")
	w.Write([]byte("\x93NUMPY\x01\x00"))
	zw.Close()
	out[Zip] = zb.Bytes()
	var gb bytes.Buffer
	gw := gzip.NewWriter(&gb)
	gw.Write(bytes.Repeat([]byte("data "), 100))
	gw.Close()
	out[Gzip] = gb.Bytes()
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	tw.WriteHeader(&tar.Header{Name: "a/b.jpg", Mode: 0o644, Size: 3, Format: tar.FormatPAX})
	tw.Write([]byte("abc"))
	tw.Close()
	out[Tar] = tb.Bytes()
	hdr := []byte(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`)
	st := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))
	st = append(append(st, hdr...), make([]byte, 8)...)
	out[Safetensors] = st
	out[NPY] = append([]byte("\x93NUMPY\x01\x00\x76\x00"), bytes.Repeat([]byte(" "), 118)...)
	out[ONNX] = []byte{0x08, 0x07, 0x12, 0x04, 'f', 'l', 'y', 'c'}
	return out
}

// TestCheckFirstUse: a file is trusted on first use only with the
// catalogue's size (exact, or within ApproxTolerance of an approximate
// one) and the first bytes of its type; each type refuses the others'.
func TestCheckFirstUse(t *testing.T) {
	dir := t.TempDir()
	files := typedFiles(t)
	for typ, b := range files {
		p := filepath.Join(dir, string(typ))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		for other := range files {
			a := Asset{File: "f", Type: other, Size: int64(len(b))}
			err := a.CheckFirstUse(p, int64(len(b)))
			// a zip member that is an .npy does not make the zip an .npy
			if want := other == typ; (err == nil) != want {
				t.Errorf("%s file checked as %s: %v, want accepted %v", typ, other, err, want)
			}
		}
	}
	p := filepath.Join(dir, string(Safetensors))
	n := int64(len(files[Safetensors]))
	for _, c := range []struct {
		name string
		a    Asset
		ok   bool
	}{
		{"exact size", Asset{Size: n, Type: Safetensors}, true},
		{"exact size, one byte off", Asset{Size: n + 1, Type: Safetensors}, false},
		{"approximate size, within", Asset{ApproxSize: n * 21 / 20, Type: Safetensors}, true},
		{"approximate size, far", Asset{ApproxSize: 346e6, Type: Safetensors}, false},
		{"no size known", Asset{Type: Safetensors}, true},
		{"type from the name", Asset{File: "x.tar.gz", Size: n}, false},
		{"no type", Asset{File: "x.bin", Size: n}, true},
	} {
		err := c.a.CheckFirstUse(p, n)
		var fe *FirstUseError
		if (err == nil) != c.ok || err != nil && !errors.As(err, &fe) {
			t.Errorf("%s: %v, want accepted %v", c.name, err, c.ok)
		}
	}
	// a safetensors header longer than the file
	bad := binary.LittleEndian.AppendUint64(nil, 1<<40)
	bad = append(bad, '{', '}')
	os.WriteFile(p, bad, 0o644)
	if err := (Asset{Type: Safetensors}).CheckFirstUse(p, int64(len(bad))); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("a header length beyond the file: %v", err)
	}
}

// TestFetchFirstUseRefusesOtherFiles: an 18-byte file served for an
// asset the catalogue says is about 346 MB of safetensors is refused:
// nothing is recorded in the lock file and nothing stays in the folder;
// the same file found in the folder is refused and left as it is, not
// recorded. A file of the right size and type is recorded, and Forget
// removes the record (the file stays); a second Forget finds nothing.
func TestFetchFirstUseRefusesOtherFiles(t *testing.T) {
	small := []byte("<html>nope</html>\n")
	if len(small) != 18 {
		t.Fatal(len(small))
	}
	s := newServer(t, serve(fixture{data: small}))
	a := Asset{Name: "vit", File: "model.safetensors", URLs: []string{s.URL + "/m"}, ApproxSize: 346e6, Type: Safetensors}
	dir := t.TempDir()
	c := quick()
	_, err := c.Fetch(context.Background(), a, dir)
	var fe *FirstUseError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "18 bytes") {
		t.Fatalf("18 bytes for a 346 MB entry: %v, want a *FirstUseError naming the size", err)
	}
	l, err := ReadLock(dir)
	if err != nil || len(l.Files) != 0 {
		t.Fatalf("lock after a refused first use: %+v %v", l, err)
	}
	mustNotExist(t, filepath.Join(dir, a.File), filepath.Join(dir, a.File+".part"))
	// found in the folder
	p := filepath.Join(dir, a.File)
	os.WriteFile(p, small, 0o644)
	if _, err := c.Fetch(context.Background(), a, dir); !errors.As(err, &fe) || !strings.Contains(err.Error(), "remove "+p) {
		t.Fatalf("an 18-byte file found in the folder: %v", err)
	}
	if l, _ := ReadLock(dir); len(l.Files) != 0 {
		t.Fatalf("a refused file found in the folder was recorded: %+v", l)
	}
	mustFile(t, p, small)
	os.Remove(p)

	// the right size and type: recorded; Forget un-pins it
	good := typedFiles(t)[Safetensors]
	s2 := newServer(t, serve(fixture{data: good}))
	a.URLs, a.ApproxSize = []string{s2.URL + "/m"}, int64(len(good))
	res, err := c.Fetch(context.Background(), a, dir)
	if err != nil || !res.Recorded {
		t.Fatalf("a file of the catalogue's size and type: %+v %v", res, err)
	}
	if l, _ := ReadLock(dir); l.Files[a.File].Size != int64(len(good)) {
		t.Fatalf("not recorded: %+v", l)
	}
	if gone, err := Forget(a, dir); !gone || err != nil {
		t.Fatalf("Forget: %v %v", gone, err)
	}
	if l, _ := ReadLock(dir); len(l.Files) != 0 {
		t.Fatalf("Forget left %+v", l)
	}
	mustFile(t, p, good)
	if gone, err := Forget(a, dir); gone || err != nil {
		t.Fatalf("second Forget: %v %v", gone, err)
	}
}

// FuzzCheckMagic: the first bytes of a download are outside bytes: the
// type checks never panic, whatever the bytes and the size claimed.
func FuzzCheckMagic(f *testing.F) {
	for _, b := range typedFiles(&testing.T{}) {
		f.Add(b, int64(len(b)))
	}
	f.Add([]byte("\xff\xff\xff\xff\xff\xff\xff\xff{"), int64(9))
	f.Add([]byte{}, int64(0))
	f.Fuzz(func(t *testing.T, head []byte, size int64) {
		for _, typ := range []FileType{Safetensors, Zip, Gzip, Tar, NPY, ONNX, AnyType} {
			checkMagic(typ, head, size)
		}
	})
}
