package dataset

import (
	"os"
	"path/filepath"
	"testing"
)

func seed(f *testing.F, files ...string) {
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
}

// check reads every sample of a data set that opened.
func check(t *testing.T, d Dataset) {
	for i := 0; i < d.Len(); i++ {
		if l := d.Label(i); l < 0 || l >= len(d.Classes()) {
			t.Fatalf("sample %d has label %d of %d classes", i, l, len(d.Classes()))
		}
		d.Image(i)
	}
}

// FuzzCIFARPickle: a CIFAR-10 python batch (meta file intact).
func FuzzCIFARPickle(f *testing.F) {
	seed(f, "testdata/cifar-10-batches-py/test_batch")
	meta, err := os.ReadFile("testdata/cifar-10-batches-py/batches.meta")
	if err != nil {
		f.Fatal(err)
	}
	dir := f.TempDir()
	os.WriteFile(filepath.Join(dir, "batches.meta"), meta, 0o600)
	f.Fuzz(func(t *testing.T, b []byte) {
		os.WriteFile(filepath.Join(dir, "test_batch"), b, 0o600)
		if d, err := OpenCIFAR(CIFAR10, dir, "test"); err == nil {
			check(t, d)
		}
	})
}

// FuzzCIFARMeta: the pickled class names.
func FuzzCIFARMeta(f *testing.F) {
	seed(f, "testdata/cifar-10-batches-py/batches.meta")
	tb, err := os.ReadFile("testdata/cifar-10-batches-py/test_batch")
	if err != nil {
		f.Fatal(err)
	}
	dir := f.TempDir()
	os.WriteFile(filepath.Join(dir, "test_batch"), tb, 0o600)
	f.Fuzz(func(t *testing.T, b []byte) {
		os.WriteFile(filepath.Join(dir, "batches.meta"), b, 0o600)
		if d, err := OpenCIFAR(CIFAR10, dir, "test"); err == nil {
			check(t, d)
		}
	})
}

// FuzzCIFARBinary: a CIFAR-100 binary batch.
func FuzzCIFARBinary(f *testing.F) {
	seed(f, "testdata/cifar-100-binary/test.bin")
	f.Add(make([]byte, 3074))
	names, err := os.ReadFile("testdata/cifar-100-binary/fine_label_names.txt")
	if err != nil {
		f.Fatal(err)
	}
	dir := f.TempDir()
	os.WriteFile(filepath.Join(dir, "fine_label_names.txt"), names, 0o600)
	f.Fuzz(func(t *testing.T, b []byte) {
		os.WriteFile(filepath.Join(dir, "test.bin"), b, 0o600)
		if d, err := OpenCIFAR(CIFAR100, dir, "test"); err == nil {
			check(t, d)
		}
	})
}

// FuzzIDX: MNIST's IDX files, plain or gzipped.
func FuzzIDX(f *testing.F) {
	f.Add([]byte{0, 0, 8, 1, 0, 0, 0, 3, 1, 2, 3})
	f.Add([]byte{0, 0, 8, 3, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 2, 1, 2, 3, 4})
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 0x62, 0x60, 0xe0, 0x60, 0x04, 0, 0, 0, 0xff, 0xff})
	p := filepath.Join(f.TempDir(), "x-idx1-ubyte")
	f.Fuzz(func(t *testing.T, b []byte) {
		os.WriteFile(p, b, 0o600)
		m, err := ReadIDX(p)
		if err != nil {
			return
		}
		n := 1
		for _, d := range m.Dims {
			n *= d
		}
		if n != len(m.Data) {
			t.Fatalf("dims %v, %d bytes", m.Dims, len(m.Data))
		}
	})
}

// FuzzArchive: a tar(.gz) read as an image-folder archive and as CIFAR.
func FuzzArchive(f *testing.F) {
	seed(f, "testdata/cifar-10-python.tar.gz")
	p := filepath.Join(f.TempDir(), "x.tar.gz")
	f.Fuzz(func(t *testing.T, b []byte) {
		os.WriteFile(p, b, 0o600)
		if d, err := OpenTarFolder(p, "train"); err == nil {
			check(t, d)
		}
		if d, err := OpenCIFAR(CIFAR10, p, "test"); err == nil {
			check(t, d)
		}
	})
}
