package zoo_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl/vision/backbone/zoo"
)

// sharedModels is this project's copy of the ONNX Model Zoo export the
// shipped files were taken from (absent on a fresh clone).
const sharedModels = "../../../../shared/models"

// TestShippedMatchesShared: every shipped weight file is byte for byte the
// file of the same name in the project's models folder, and neither side
// has a file the other lacks (so the weights digest, computed from names
// and contents, is the same for both).
func TestShippedMatchesShared(t *testing.T) {
	if _, err := os.Stat(sharedModels); err != nil {
		t.Skipf("the project's models folder is not beside this checkout (%v): nothing to compare the shipped weights with", err)
	}
	for _, dir := range []string{zoo.MobileNetV2, zoo.SqueezeNet} {
		t.Run(dir, func(t *testing.T) {
			shipped, err := fs.Glob(zoo.FS(), dir+"/*")
			if err != nil {
				t.Fatal(err)
			}
			onDisk, err := filepath.Glob(filepath.Join(sharedModels, dir, "*"))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range onDisk {
				names = append(names, dir+"/"+filepath.Base(p))
			}
			if !slices.Equal(shipped, names) {
				t.Fatalf("shipped files %v\ndiffer from %s: %v", shipped, filepath.Join(sharedModels, dir), names)
			}
			for _, name := range shipped {
				got, err := fs.ReadFile(zoo.FS(), name)
				if err != nil {
					t.Fatal(err)
				}
				want, err := os.ReadFile(filepath.Join(sharedModels, name))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s: shipped %d bytes differ from the shared file's %d", name, len(got), len(want))
				}
			}
		})
	}
}

// TestShippedLayout: the folders hold the per-layer files the backbone
// builders read (104 for MobileNetV2: 52 convolutions with weight and
// bias; 52 for SqueezeNet: 26), and the licence and attribution travel
// with them.
func TestShippedLayout(t *testing.T) {
	for dir, want := range map[string]int{zoo.MobileNetV2: 104, zoo.SqueezeNet: 52} {
		files, err := fs.Glob(zoo.FS(), dir+"/*.npy")
		if err != nil || len(files) != want {
			t.Errorf("%s: %d .npy files (%v), want %d", dir, len(files), err, want)
		}
	}
	for name, must := range map[string][]string{
		"LICENSE": {"Apache License", "Version 2.0, January 2004", "END OF TERMS AND CONDITIONS"},
		"NOTICE":  {"ONNX Model Zoo", "https://github.com/onnx/models", "Apache License", "batch normalisation was folded"},
	} {
		b, err := fs.ReadFile(zoo.FS(), name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, s := range must {
			if !strings.Contains(string(b), s) {
				t.Errorf("%s does not say %q", name, s)
			}
		}
	}
}
