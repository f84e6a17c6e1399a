package dataset

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flycl/flycl/format/npz"
)

func expected(t *testing.T) *npz.Reader {
	t.Helper()
	r, err := npz.Open("testdata/expected.npz")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func ints(t *testing.T, r *npz.Reader, name string) []int {
	v, _, err := r.Int64(name)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

// TestCIFAR reads the miniature releases of testdata/gen.py in every
// form (python pickle and binary; directory and .tar.gz) and compares
// labels and pixels with what NumPy wrote.
func TestCIFAR(t *testing.T) {
	exp := expected(t)
	c10Data, _, _ := exp.Float32("c10_train_data")
	c100Data, _, _ := exp.Float32("c100_train_data")
	for _, c := range []struct {
		kind, src, split, labels string
		data                     []float32
	}{
		{CIFAR10, "testdata/cifar-10-batches-py", "train", "c10_train_labels", c10Data},
		{CIFAR10, "testdata/cifar-10-python.tar.gz", "train", "c10_train_labels", c10Data},
		{CIFAR10, "testdata/cifar-10-batches-bin", "train", "c10_train_labels", c10Data},
		{CIFAR10, "testdata/cifar-10-batches-py", "test", "c10_test_labels", nil},
		{CIFAR10, "testdata/cifar-10-batches-bin", "test", "c10_test_labels", nil},
		{CIFAR100, "testdata/cifar-100-python", "train", "c100_train_labels", c100Data},
		{CIFAR100, "testdata/cifar-100-python.tar.gz", "train", "c100_train_labels", c100Data},
		{CIFAR100, "testdata/cifar-100-binary", "train", "c100_train_labels", c100Data},
		{CIFAR100, "testdata/cifar-100-python", "test", "c100_test_labels", nil},
	} {
		ds, err := OpenCIFAR(c.kind, c.src, c.split)
		if err != nil {
			t.Fatalf("%s %s: %v", c.src, c.split, err)
		}
		want := ints(t, exp, c.labels)
		var got []int
		for i := 0; i < ds.Len(); i++ {
			got = append(got, ds.Label(i))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s %s: labels %v want %v", c.src, c.split, got, want)
		}
		if n := len(ds.Classes()); (c.kind == CIFAR10 && n != 10) || (c.kind == CIFAR100 && n != 100) {
			t.Errorf("%s: %d classes", c.src, n)
		}
		if c.kind == CIFAR10 && ds.Classes()[3] != "cat" {
			t.Errorf("%s: class names %v", c.src, ds.Classes())
		}
		for i := 0; c.data != nil && i < ds.Len(); i++ {
			img, err := ds.Image(i)
			if err != nil {
				t.Fatal(err)
			}
			rec := c.data[i*3072 : (i+1)*3072]
			// pixel (x=5, y=2): planes R, G, B at offset 2*32+5
			r, g, b := img.At(5, 2)
			if float32(r) != rec[69] || float32(g) != rec[1024+69] || float32(b) != rec[2048+69] {
				t.Fatalf("%s image %d: pixel %d,%d,%d want %v,%v,%v", c.src, i, r, g, b, rec[69], rec[1024+69], rec[2048+69])
			}
		}
	}
}

func TestCIFARErrors(t *testing.T) {
	dir := t.TempDir()
	// binary batch cut mid-record
	bin := filepath.Join(dir, "bin")
	os.MkdirAll(bin, 0o755)
	os.WriteFile(filepath.Join(bin, "batches.meta.txt"), []byte("a\nb\n"), 0o644)
	good, _ := os.ReadFile("testdata/cifar-10-batches-bin/test_batch.bin")
	os.WriteFile(filepath.Join(bin, "test_batch.bin"), good[:5000], 0o644)
	// corrupt pickle
	pyd := filepath.Join(dir, "py")
	os.MkdirAll(pyd, 0o755)
	meta, _ := os.ReadFile("testdata/cifar-10-batches-py/batches.meta")
	os.WriteFile(filepath.Join(pyd, "batches.meta"), meta, 0o644)
	tb, _ := os.ReadFile("testdata/cifar-10-batches-py/test_batch")
	os.WriteFile(filepath.Join(pyd, "test_batch"), tb[:len(tb)/2], 0o644)
	// truncated archive
	arc, _ := os.ReadFile("testdata/cifar-10-python.tar.gz")
	tgz := filepath.Join(dir, "cut.tar.gz")
	os.WriteFile(tgz, arc[:len(arc)/2], 0o644)
	for name, c := range map[string]struct {
		src, split, want string
	}{
		"truncated binary":  {bin, "test", "not a whole number"},
		"truncated pickle":  {pyd, "test", "test_batch"},
		"missing batch":     {pyd, "train", "data_batch_1"},
		"truncated archive": {tgz, "test", "cut.tar.gz"},
		"bad split":         {bin, "val", "split"},
		"not cifar":         {t.TempDir(), "test", "neither"},
	} {
		_, err := OpenCIFAR(CIFAR10, c.src, c.split)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v (want %q)", name, err, c.want)
		}
	}
}

func pngBytes(t *testing.T, v uint8) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 4, 3))
	for i := range img.Pix {
		img.Pix[i] = v
	}
	img.Set(0, 0, color.NRGBA{255, 0, 0, 255})
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

func writeTree(t *testing.T, root string, files map[string][]byte) {
	for p, b := range files {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func tarGz(t *testing.T, path string, files map[string][]byte) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg})
		tw.Write(files[n])
	}
	tw.Close()
	gz.Close()
	os.WriteFile(path, buf.Bytes(), 0o644)
}

func TestFolderAndTar(t *testing.T) {
	files := map[string][]byte{
		"data/train/zebra/b.png":    pngBytes(t, 10),
		"data/train/zebra/a.png":    pngBytes(t, 20),
		"data/train/ant/x/deep.png": pngBytes(t, 30),
		"data/train/ant/notes.txt":  []byte("not an image"),
		"data/test/ant/1.png":       pngBytes(t, 40),
		"data/test/zebra/1.png":     pngBytes(t, 50),
	}
	dir := t.TempDir()
	writeTree(t, dir, files)
	tgz := filepath.Join(dir, "data.tar.gz")
	tarGz(t, tgz, files)
	for _, spec := range []string{"folder:" + filepath.Join(dir, "data"), "folder:" + tgz} {
		ds, err := Open(spec, "train")
		if err != nil {
			t.Fatal(spec, err)
		}
		if ds.Len() != 3 || !slices.Equal(ds.Classes(), []string{"ant", "zebra"}) {
			t.Fatalf("%s: %d samples, classes %v", spec, ds.Len(), ds.Classes())
		}
		// ant/x/deep.png, then zebra/a.png, zebra/b.png
		wantLabels, wantV := []int{0, 1, 1}, []uint8{30, 20, 10}
		for i := 0; i < 3; i++ {
			img, err := ds.Image(i)
			if err != nil {
				t.Fatal(err)
			}
			if _, g, _ := img.At(1, 1); ds.Label(i) != wantLabels[i] || g != wantV[i] {
				t.Errorf("%s sample %d (%s): label %d value %d", spec, i, ds.Path(i), ds.Label(i), g)
			}
		}
	}
	os.MkdirAll(filepath.Join(dir, "data", "train", "empty"), 0o755)
	if _, err := Open("folder:"+filepath.Join(dir, "data"), "train"); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty class: %v", err)
	}
	for _, spec := range []string{"nope:" + dir, "cifar10", "folder:" + filepath.Join(dir, "missing")} {
		if _, err := Open(spec, "train"); err == nil {
			t.Errorf("%s: no error", spec)
		}
	}
	// A directory without the split's sub-folder: the error says which
	// layout folder:DIR reads.
	if _, err := Open("folder:"+filepath.Join(dir, "data", "train"), "test"); err == nil || !strings.Contains(err.Error(), "no test/ sub-folder (folder:DIR reads DIR/test/<class>/<image>)") {
		t.Errorf("no test/ sub-folder: %v", err)
	}
}

func TestCUB(t *testing.T) {
	files := map[string][]byte{
		"CUB_200_2011/images.txt":             []byte("1 002.B/b1.png\n2 001.A/a1.png\n3 001.A/a2.png\n4 002.B/b2.png\n"),
		"CUB_200_2011/image_class_labels.txt": []byte("1 2\n2 1\n3 1\n4 2\n"),
		"CUB_200_2011/train_test_split.txt":   []byte("1 1\n2 1\n3 0\n4 0\n"),
		"CUB_200_2011/classes.txt":            []byte("1 001.A\n2 002.B\n"),
		"CUB_200_2011/images/002.B/b1.png":    pngBytes(t, 1),
		"CUB_200_2011/images/001.A/a1.png":    pngBytes(t, 2),
		"CUB_200_2011/images/001.A/a2.png":    pngBytes(t, 3),
		"CUB_200_2011/images/002.B/b2.png":    pngBytes(t, 4),
	}
	dir := t.TempDir()
	writeTree(t, dir, files)
	tgz := filepath.Join(dir, "CUB_200_2011.tgz")
	tarGz(t, tgz, files)
	for _, src := range []string{filepath.Join(dir, "CUB_200_2011"), dir, tgz} {
		for split, want := range map[string][2][]int{"train": {{1, 0}, {1, 2}}, "test": {{0, 1}, {3, 4}}} {
			ds, err := OpenCUB(src, split)
			if err != nil {
				t.Fatal(src, err)
			}
			var labels, vals []int
			for i := 0; i < ds.Len(); i++ {
				img, err := ds.Image(i)
				if err != nil {
					t.Fatal(err)
				}
				_, g, _ := img.At(1, 1)
				labels, vals = append(labels, ds.Label(i)), append(vals, int(g))
			}
			if !slices.Equal(labels, want[0]) || !slices.Equal(vals, want[1]) || ds.Classes()[1] != "002.B" {
				t.Errorf("%s %s: labels %v values %v", src, split, labels, vals)
			}
		}
	}
	// PILOT layout: cub/train/<class>, cub/test/<class>
	pilot := filepath.Join(t.TempDir(), "cub")
	writeTree(t, pilot, map[string][]byte{"train/001.A/x.png": pngBytes(t, 5), "test/001.A/y.png": pngBytes(t, 6)})
	if ds, err := OpenCUB(pilot, "test"); err != nil || ds.Len() != 1 {
		t.Errorf("PILOT layout: %v", err)
	}
	// missing split file
	os.Remove(filepath.Join(dir, "CUB_200_2011", "train_test_split.txt"))
	if _, err := OpenCUB(filepath.Join(dir, "CUB_200_2011"), "train"); err == nil || !strings.Contains(err.Error(), "train_test_split.txt") {
		t.Errorf("missing split file: %v", err)
	}
}

// TestSharedCIFAR10JPEG reads the test split of the real CIFAR-10 JPEG
// archive in ../../shared (10 classes × 1000 images of 32×32).
func TestSharedCIFAR10JPEG(t *testing.T) {
	p := "../../../shared/data/cifar10-jpeg.tar.gz"
	if _, err := os.Stat(p); err != nil {
		t.Skip("shared data not available")
	}
	ds, err := Open("folder:"+p, "test")
	if err != nil {
		t.Fatal(err)
	}
	if ds.Len() != 10000 || len(ds.Classes()) != 10 || ds.Classes()[0] != "airplane" {
		t.Fatalf("%d images, classes %v", ds.Len(), ds.Classes())
	}
	counts := make([]int, 10)
	for i := 0; i < ds.Len(); i++ {
		counts[ds.Label(i)]++
	}
	for c, n := range counts {
		if n != 1000 {
			t.Fatalf("class %d has %d images", c, n)
		}
	}
	img, err := ds.Image(1234)
	if err != nil || img.W != 32 || img.H != 32 {
		t.Fatalf("%v %v", img, err)
	}
	_ = fmt.Sprint
}

// TestSpecKey: an archive is keyed by its bytes (an identical copy elsewhere
// is the same key, one changed byte another); a folder by its files' paths,
// sizes and times (a replaced image changes it, a copy keeping times does not).
func TestSpecKey(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.tar.gz")
	b := filepath.Join(dir, "copy", "b.tar.gz")
	os.MkdirAll(filepath.Dir(b), 0o755)
	data := noise(5000)
	os.WriteFile(a, data, 0o644)
	os.WriteFile(b, data, 0o644)
	key := func(spec, split string) string {
		t.Helper()
		s, err := ParseSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		k, err := s.Key(split)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	if key("folder:"+a, "train") != key("folder:"+b, "train") {
		t.Error("identical archives have different keys")
	}
	if key("folder:"+a, "train") == key("folder:"+a, "test") {
		t.Error("the split is not in the key")
	}
	data[2500] ^= 1
	os.WriteFile(b, data, 0o644)
	if key("folder:"+a, "train") == key("folder:"+b, "train") {
		t.Error("a changed byte keeps the key")
	}
	root := filepath.Join(dir, "f")
	img := filepath.Join(root, "train", "c", "x.png")
	os.MkdirAll(filepath.Dir(img), 0o755)
	os.WriteFile(img, noise(100), 0o644)
	t0 := time.Unix(1700000000, 0)
	os.Chtimes(img, t0, t0)
	k0 := key("folder:"+root, "train")
	os.WriteFile(img, noise(100)[1:], 0o644) // replaced by another image
	os.Chtimes(img, t0, t0)
	if key("folder:"+root, "train") == k0 {
		t.Error("a replaced image (other size) keeps the folder's key")
	}
	os.WriteFile(img, noise(100), 0o644)
	os.Chtimes(img, t0.Add(time.Second), t0.Add(time.Second))
	if key("folder:"+root, "train") == k0 {
		t.Error("a replaced image (other time) keeps the folder's key")
	}
	os.Chtimes(img, t0, t0)
	if key("folder:"+root, "train") != k0 {
		t.Error("the same files give another key")
	}
	if _, err := ParseSpec("imagenet:/x"); err == nil || !strings.Contains(err.Error(), "imagenet") {
		t.Errorf("unknown kind: %v", err)
	}
}

// BenchmarkSpecKey measures the content key of the CIFAR-10 JPEG archive in
// ../../shared (60000 images, 20 MB: one SHA-256 pass over the file), and of
// the same images unpacked into a folder (path, size and time of each of
// the 50000 training files): go test -run XXX -bench SpecKey ./dataset
func BenchmarkSpecKey(b *testing.B) {
	p := "../../../shared/data/cifar10-jpeg.tar.gz"
	if _, err := os.Stat(p); err != nil {
		b.Skip("shared data not available")
	}
	key := func(b *testing.B, spec string) {
		s, err := ParseSpec(spec)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < b.N; i++ {
			if _, err := s.Key("train"); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("archive", func(b *testing.B) {
		st, _ := os.Stat(p)
		b.SetBytes(st.Size())
		key(b, "folder:"+p)
	})
	b.Run("folder", func(b *testing.B) {
		dir := b.TempDir()
		err := walkTar(p, func(name string, r io.Reader) error {
			dst := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			data, err := io.ReadAll(r)
			if err != nil {
				return err
			}
			return os.WriteFile(dst, data, 0o644)
		})
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		key(b, "folder:"+dir)
	})
}

// TestSubset: sample i of a subset is sample idx[i] of the data set (label,
// path and pixels), in the order idx gives, repeats included.
func TestSubset(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{}
	for c, name := range []string{"a", "b"} {
		for j := range 3 {
			files[fmt.Sprintf("%s/%d.png", name, j)] = pngBytes(t, uint8(40*c+10*j))
		}
	}
	writeTree(t, dir, files)
	ds, err := OpenFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx := []int{5, 0, 3, 3}
	s := Subset(ds, idx)
	if s.Len() != len(idx) || !slices.Equal(s.Classes(), ds.Classes()) {
		t.Fatalf("subset of %d with classes %v, want %d with %v", s.Len(), s.Classes(), len(idx), ds.Classes())
	}
	for i, j := range idx {
		a, err := s.Image(i)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ds.Image(j)
		if err != nil {
			t.Fatal(err)
		}
		if s.Label(i) != ds.Label(j) || s.Path(i) != ds.Path(j) || !slices.Equal(a.Pix, b.Pix) {
			t.Errorf("subset sample %d: label %d path %s, want sample %d of the set: label %d path %s (pixels equal: %v)",
				i, s.Label(i), s.Path(i), j, ds.Label(j), ds.Path(j), slices.Equal(a.Pix, b.Pix))
		}
	}
}

// TestParseSpecHintsFolder: a bare path, the commonest slip (--data
// photos), is told the folder: form with its own path; a kind:path of an
// unknown kind is not (the path was not the slip there).
func TestParseSpecHintsFolder(t *testing.T) {
	for _, tc := range []struct {
		in, hint string
	}{
		{"photos", "give folder:photos"},
		{"../cams/garden", "give folder:../cams/garden"},
		{"imagenet:/x", ""},
	} {
		_, err := ParseSpec(tc.in)
		if err == nil {
			t.Fatalf("%s: no error", tc.in)
		}
		hinted := strings.Contains(err.Error(), "give folder:")
		if tc.hint != "" && !strings.Contains(err.Error(), tc.hint) || tc.hint == "" && hinted {
			t.Errorf("%s: %v (want hint %q)", tc.in, err, tc.hint)
		}
	}
	if s, err := ParseSpec("folder:photos"); err != nil || s.Kind != "folder" || s.Path != "photos" {
		t.Errorf("the hint's own form: %+v, %v", s, err)
	}
}
