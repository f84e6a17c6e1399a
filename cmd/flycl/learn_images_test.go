package main

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/vision/backbone/zoo"
)

const sharedDir = "../../../shared"

// ortLib returns the ONNX Runtime library the tests use (FLYCL_ORT_LIB, or
// the one make ort installs), or skips the test when it is not there.
func ortLib(t *testing.T) string {
	t.Helper()
	lib := os.Getenv("FLYCL_ORT_LIB")
	if lib == "" {
		lib = "../../.cache/onnxruntime/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"
	}
	if _, err := os.Stat(lib); err != nil {
		t.Skipf("ONNX Runtime not available: %v", err)
	}
	return lib
}

// squeezeNet returns ONNX Runtime's library and the shared SqueezeNet 1.1
// weights directory, or without ../shared a copy of the weights built into
// the binary (the same files), skipping the test without ONNX Runtime.
func squeezeNet(t *testing.T) (lib, dir string) {
	t.Helper()
	lib = ortLib(t)
	return lib, weightsDir(t, zoo.SqueezeNet)
}

// weightsDir returns the shared weights folder of a built-in backbone
// (zoo.SqueezeNet, zoo.MobileNetV2), or without ../shared a copy of the
// weights built into the binary (the same files).
func weightsDir(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(sharedDir, "models", name)
	if _, err := os.Stat(dir); err == nil {
		return dir
	}
	dir = filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, must(fs.Sub(zoo.FS(), name))); err != nil {
		t.Fatal(err)
	}
	return dir
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// cifarImages copies the first n JPEGs of some CIFAR-10 training classes
// into DIR/<class>/ (the layout a user teaches from). Without ../shared it
// draws n 32×32 JPEGs (CIFAR's size) of a pattern per class instead
// (drawnAs: airplane stripes, frog checks, ship discs).
func cifarImages(t *testing.T, classes []string, n int) string {
	t.Helper()
	f, err := os.Open(filepath.Join(sharedDir, "data", "cifar10-jpeg.tar.gz"))
	if errors.Is(err, fs.ErrNotExist) {
		dir := t.TempDir()
		r := rand.New(rand.NewPCG(uint64(len(classes)), uint64(n)))
		for _, c := range classes {
			pattern, ok := drawnAs[c]
			if !ok {
				t.Fatalf("no drawn pattern for class %q (drawnAs)", c)
			}
			os.MkdirAll(filepath.Join(dir, c), 0o755)
			for i := range n {
				if err := os.WriteFile(filepath.Join(dir, c, fmt.Sprintf("%d.jpg", i)), encodePicture(t, shapePicture(pattern, 32, r), "jpg"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		return dir
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	got := map[string]int{}
	need := len(classes) * n
	tr := tar.NewReader(zr)
	for need > 0 {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("archive ended with %d images missing: %v", need, err)
		}
		parts := strings.Split(h.Name, "/")
		if h.Typeflag != tar.TypeReg || len(parts) != 3 || parts[0] != "train" || !slices.Contains(classes, parts[1]) || got[parts[1]] >= n {
			continue
		}
		got[parts[1]]++
		need--
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, parts[1], parts[2])
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, b, 0o644)
	}
	return dir
}

// TestModelCommandsImages: the deploy story from the command line with
// real photos through SqueezeNet: teach two classes, then a third from
// its own folder (the model's backbone is reused), classify image files,
// and refuse another backbone without touching the file. Without ../shared:
// drawn pictures (cifarImages) through the built-in SqueezeNet.
func TestModelCommandsImages(t *testing.T) {
	lib, sq := squeezeNet(t)
	first := cifarImages(t, []string{"airplane", "frog"}, 6)
	ships := cifarImages(t, []string{"ship"}, 6)
	model := filepath.Join(t.TempDir(), "cam.flycl")
	common := []string{"--model", model, "--ort-lib", lib, "--cache", "", "--quiet"}
	out, err := runCLI(t, append([]string{"learn", "--data", "folder:" + first, "--backbone", "squeezenet:" + sq,
		"--m", "2000", "--p", "50", "--k", "600", "--lambdas", "1,10,100,1000"}, common...)...)
	if err != nil || !strings.Contains(out, "classes added (2): airplane, frog") {
		t.Fatalf("learn: %v\n%s", err, out)
	}
	out, err = runCLI(t, append([]string{"learn", "--data", "folder:" + ships}, common...)...)
	if err != nil || !strings.Contains(out, "classes added (1): ship") || !strings.Contains(out, "version 2, 3 classes, 18 samples") {
		t.Fatalf("learn ship: %v\n%s", err, out)
	}
	imgs, _ := filepath.Glob(filepath.Join(ships, "ship", "*.jpg"))
	out, err = runCLI(t, append([]string{"predict", "--format", "csv", "--top", "1"}, append(common, imgs...)...)...)
	if err != nil {
		t.Fatal(err)
	}
	// Training images of a class the model learned are classified as it.
	if n := strings.Count(out, ",ship,"); n != len(imgs) {
		t.Fatalf("%d of %d ship training images predicted as ship:\n%s", n, len(imgs), out)
	}
	before, _ := os.ReadFile(model)
	other := "mobilenetv2:" + filepath.Join(sharedDir, "models", "mobilenetv2-1.0")
	if _, err := os.Stat(strings.TrimPrefix(other, "mobilenetv2:")); err != nil {
		other = "mobilenetv2" // the built-in weights
	}
	if _, err := runCLI(t, append([]string{"learn", "--data", "folder:" + ships, "--backbone", other}, common...)...); err == nil || !strings.Contains(err.Error(), "not the model's") {
		t.Fatalf("another backbone: %v", err)
	}
	if after, _ := os.ReadFile(model); string(after) != string(before) {
		t.Fatal("a refused learn changed the model file")
	}
}

// TestMaxImagePixelsApplies: --max-image-pixels, registered on learn and
// predict, is applied to the images they decode (it used to be read by
// extract only): CIFAR's 32×32 photos (1024 pixels) are refused with a
// limit of 1000 and accepted with 1024; 0 is refused as on extract.
func TestMaxImagePixelsApplies(t *testing.T) {
	lib, sq := squeezeNet(t)
	dir := cifarImages(t, []string{"airplane", "frog"}, 2)
	model := filepath.Join(t.TempDir(), "cam.flycl")
	common := []string{"--model", model, "--ort-lib", lib, "--cache", "", "--quiet"}
	learn := append([]string{"learn", "--data", "folder:" + dir, "--backbone", "squeezenet:" + sq,
		"--m", "200", "--p", "20", "--k", "60", "--lambdas", "1,10"}, common...)
	if _, err := runCLI(t, append(learn, "--max-image-pixels", "1000")...); err == nil || !strings.Contains(err.Error(), "pixels") {
		t.Fatalf("learn with a 1000-pixel limit: %v", err)
	}
	if _, err := os.Stat(model); err == nil {
		t.Fatal("a refused learn created the model")
	}
	if _, err := runCLI(t, append(learn, "--max-image-pixels", "0")...); err == nil || !strings.Contains(err.Error(), "--max-image-pixels 0") {
		t.Fatalf("learn with limit 0: %v", err)
	}
	if _, err := runCLI(t, append(learn, "--max-image-pixels", "1024")...); err != nil {
		t.Fatalf("learn with a 1024-pixel limit: %v", err)
	}
	img, _ := filepath.Glob(filepath.Join(dir, "frog", "*"))
	if _, err := runCLI(t, "predict", "--model", model, "--ort-lib", lib, "--quiet", "--max-image-pixels", "1000", img[0]); err == nil || !strings.Contains(err.Error(), "pixels") {
		t.Fatalf("predict with a 1000-pixel limit: %v", err)
	}
}

// TestExtractSplitLessFolder: extract on the layout a user teaches from,
// DIR/<class>/<image> with no train/ or test/ sub-folder, writes every
// image into train.npz (labels by class folder) and no test.npz; then
// learn --features takes that file.
func TestExtractSplitLessFolder(t *testing.T) {
	lib, sq := squeezeNet(t)
	dir := cifarImages(t, []string{"airplane", "frog"}, 3)
	out := filepath.Join(t.TempDir(), "feat")
	if _, err := runCLI(t, "extract", "--data", "folder:"+dir, "--backbone", "squeezenet:"+sq,
		"--ort-lib", lib, "--cache", "", "--quiet", "--out", out); err != nil {
		t.Fatal(err)
	}
	s, err := features.Load(filepath.Join(out, "train.npz"))
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, l := range s.Labels {
		count[s.ClassNames[l]]++
	}
	if s.N != 6 || count["airplane"] != 3 || count["frog"] != 3 || s.D != 512 {
		t.Fatalf("train.npz: %d samples of dimension %d, per class %v; want 3 airplanes and 3 frogs, d=512", s.N, s.D, count)
	}
	if _, err := os.Stat(filepath.Join(out, "test.npz")); !os.IsNotExist(err) {
		t.Fatalf("test.npz: %v, want none", err)
	}
	model := filepath.Join(t.TempDir(), "cam.flycl")
	got, err := runCLI(t, "learn", "--model", model, "--features", filepath.Join(out, "train.npz"),
		"--m", "200", "--p", "20", "--k", "60", "--lambdas", "1,10")
	if err != nil || !strings.Contains(got, "classes added (2): airplane, frog") {
		t.Fatalf("learn --features: %v\n%s", err, got)
	}
}
