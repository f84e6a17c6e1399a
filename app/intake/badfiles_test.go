package intake

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/jpeg"
	"image/png"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flycl/flycl/vision/backbone"
	"github.com/flycl/flycl/vision/backbone/zoo"
	"github.com/flycl/flycl/vision/dataset"
	"github.com/flycl/flycl/vision/extract"
)

// builtinSqueezeNet is an extractor of the SqueezeNet built into flycl
// (vision/backbone/zoo), skipping the test without ONNX Runtime.
func builtinSqueezeNet(t *testing.T) *extract.Extractor {
	t.Helper()
	m, err := extract.OpenBackboneFS("squeezenet", zoo.FS(), "zoo")
	if err != nil {
		t.Fatal(err)
	}
	if err := backbone.Init(testLibrary()); err != nil {
		t.Skipf("ONNX Runtime not available: %v", err)
	}
	e, err := extract.NewExtractor(m, "squeezenet", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.BatchSize = 4
	return e
}

// encoded returns a random 24×20 image as JPEG or PNG.
func encoded(t *testing.T, seed uint64, format string) []byte {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 9))
	img := image.NewNRGBA(image.Rect(0, 0, 24, 20))
	for i := range img.Pix {
		img.Pix[i] = uint8(r.IntN(256))
		if i%4 == 3 {
			img.Pix[i] = 255
		}
	}
	var b bytes.Buffer
	var err error
	if format == "png" {
		err = png.Encode(&b, img)
	} else {
		err = jpeg.Encode(&b, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestBadFiles: a folder of photos with files that are not images (by
// extension: listed as skipped) and images that cannot be decoded
// (truncated JPEG, PNG with a damaged chunk, text named .jpg): without
// SkipBad one error names every bad image; with it, the others are
// extracted (the same features as a folder of them alone) and the bad
// ones listed; nothing readable is an error.
func TestBadFiles(t *testing.T) {
	e := builtinSqueezeNet(t)
	good := map[string][]byte{}
	for i, f := range []string{"a/1.jpg", "a/2.png", "b/1.jpg", "b/2.png", "b/3.jpg"} {
		good[f] = encoded(t, uint64(i), filepath.Ext(f)[1:])
	}
	truncated := encoded(t, 10, "jpg")
	truncated = truncated[:len(truncated)/2]
	damaged := slices.Clone(encoded(t, 11, "png"))
	damaged[len(damaged)/2] ^= 0xff // inside IDAT: its CRC fails
	bad := map[string][]byte{"a/cut.jpg": truncated, "b/crc.png": damaged, "b/text.jpg": []byte("not a photo\n")}
	notImages := map[string][]byte{"a/notes.txt": []byte("three photos of a\n"), "b/.DS_Store": {0, 1, 2}}
	write := func(dir string, files ...map[string][]byte) {
		for _, m := range files {
			for f, b := range m {
				p := filepath.Join(dir, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	mixed, clean, allBad := t.TempDir(), t.TempDir(), t.TempDir()
	write(mixed, good, bad, notImages)
	write(clean, good)
	write(allBad, bad)
	wantBad := []string{filepath.Join(mixed, "a/cut.jpg"), filepath.Join(mixed, "b/crc.png"), filepath.Join(mixed, "b/text.jpg")}
	ctx := context.Background()
	samples := func(dir string, skip bool) (*Input, *Samples, error) {
		in, err := OpenInput(InputOptions{Data: dataset.Spec{Kind: "folder", Path: dir}, Split: "train", SkipBad: skip})
		if err != nil {
			t.Fatal(err)
		}
		s, err := in.Samples(ctx, e, 0, in.Len())
		return in, s, err
	}
	_, want, err := samples(clean, false)
	if err != nil {
		t.Fatal(err)
	}
	badPaths := func(err error) []string {
		var be *BadFilesError
		if !errors.As(err, &be) {
			return nil
		}
		var p []string
		for _, f := range be.Files {
			p = append(p, f.Path)
		}
		return p
	}
	for _, c := range []struct {
		name    string
		dir     string
		skip    bool
		errBad  []string // the bad files the error names (nil: no error)
		skipped []string // the files not images, by extension
	}{
		{"clean", clean, false, nil, nil},
		{"refuse", mixed, false, wantBad, []string{filepath.Join(mixed, "a/notes.txt")}},
		{"skip", mixed, true, nil, []string{filepath.Join(mixed, "a/notes.txt")}},
		{"all bad", allBad, true, []string{filepath.Join(allBad, "a/cut.jpg"), filepath.Join(allBad, "b/crc.png"), filepath.Join(allBad, "b/text.jpg")}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, s, err := samples(c.dir, c.skip)
			if got := in.Skipped(); !slices.Equal(got, c.skipped) {
				t.Errorf("skipped %q, want %q", got, c.skipped)
			}
			if c.errBad != nil {
				if got := badPaths(err); !slices.Equal(got, c.errBad) {
					t.Fatalf("error %v names %q, want %q", err, got, c.errBad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var gotBad []string
			for _, b := range s.Bad {
				gotBad = append(gotBad, b.Path)
			}
			if c.skip && !slices.Equal(gotBad, wantBad) {
				t.Errorf("bad %q, want %q", gotBad, wantBad)
			}
			// the good images' features and labels, as from a folder of
			// them alone, and keys naming them
			if s.N != want.N || !slices.Equal(s.Labels, want.Labels) || !slices.Equal(s.X, want.X) {
				t.Errorf("%d samples, labels %v, want %d, %v (features equal: %v)", s.N, s.Labels, want.N, want.Labels, slices.Equal(s.X, want.X))
			}
			for i, k := range s.Keys {
				if filepath.Base(k) != filepath.Base(want.Keys[i]) {
					t.Errorf("key %d: %s, want the file %s", i, k, filepath.Base(want.Keys[i]))
				}
			}
		})
	}
	// image files given one by one (predict): the good ones' features in
	// order, the bad ones listed
	var paths []string
	for _, f := range []string{"a/1.jpg", "a/cut.jpg", "a/2.png", "b/text.jpg", "b/1.jpg", "b/crc.png", "b/2.png", "b/3.jpg"} {
		paths = append(paths, filepath.Join(mixed, f))
	}
	in, err := OpenInput(InputOptions{Files: paths, SkipBad: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := in.Samples(ctx, e, 0, in.Len())
	if err != nil {
		t.Fatal(err)
	}
	if s.N != want.N || !slices.Equal(s.X, want.X) || len(s.Bad) != 3 || s.Bad[0].Path != paths[1] || s.Keys[1] != paths[2] {
		t.Errorf("files: %d good (features equal %v), bad %v, keys %q", s.N, slices.Equal(s.X, want.X), s.Bad, s.Keys)
	}
}

// testLibrary is ONNX Runtime's library: FLYCL_ORT_LIB, else where
// scripts/install-deps puts it.
func testLibrary() string {
	if p := os.Getenv("FLYCL_ORT_LIB"); p != "" {
		return p
	}
	return "../../.cache/onnxruntime/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"
}

// squeezeNet opens the backbone name from ../shared's models, or the
// built-in weights without ../shared, and initialises ONNX Runtime: the
// test skips without either.
func squeezeNet(t *testing.T, name string) *backbone.Model {
	t.Helper()
	shared := filepath.Join("..", "..", "..", "shared")
	m, err := extract.OpenBackbone(name, filepath.Join(shared, "models"))
	if _, serr := os.Stat(shared); err != nil && errors.Is(serr, fs.ErrNotExist) {
		m, err = extract.OpenBackboneFS(name, zoo.FS(), "built-in")
	}
	if err != nil {
		t.Skipf("%s not available: %v", name, err)
	}
	if err := backbone.Init(testLibrary()); err != nil {
		t.Skipf("ONNX Runtime not available: %v", err)
	}
	return m
}
