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

// FuzzCUB: CUB-200-2011's four metadata text files.
func FuzzCUB(f *testing.F) {
	f.Add("1 a/1.png\n2 b/2.png\n", "1 1\n2 2\n", "1 1\n2 0\n", "1 001.a\n2 002.b\n")
	f.Add("1 a/1.png\n", "1 3\n", "1 1\n", "1 x\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, images, labels, split, classes string) {
		for name, s := range map[string]string{"images.txt": images, "image_class_labels.txt": labels,
			"train_test_split.txt": split, "classes.txt": classes} {
			os.WriteFile(filepath.Join(dir, name), []byte(s), 0o600)
		}
		d, err := OpenCUB(dir, "train")
		if err != nil {
			return
		}
		for i := 0; i < d.Len(); i++ {
			if l := d.Label(i); l < 0 || l >= len(d.Classes()) {
				t.Fatalf("sample %d has label %d of %d classes", i, l, len(d.Classes()))
			}
		}
	})
}

// FuzzMNIST: an MNIST directory's image and label IDX files together.
func FuzzMNIST(f *testing.F) {
	f.Add([]byte{0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, 1, 2, 3, 4}, []byte{0, 0, 8, 1, 0, 0, 0, 2, 7, 3})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, images, labels []byte) {
		os.WriteFile(filepath.Join(dir, "t10k-images-idx3-ubyte"), images, 0o600)
		os.WriteFile(filepath.Join(dir, "t10k-labels-idx1-ubyte"), labels, 0o600)
		g, err := ReadMNIST(dir, "test")
		if err != nil {
			return
		}
		if err := g.Features().Validate(); err != nil && g.N > 0 && g.Rows*g.Cols > 0 {
			t.Fatal(err)
		}
		d, err := Spec{Kind: "mnist", Path: dir}.Open("test")
		if err == nil {
			check(t, d)
		}
	})
}
