package extract

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/flycl/flycl/vision/backbone/zoo"
)

// copyShipped writes the shipped files of folder into dir/folder and
// returns dir.
func copyShipped(t *testing.T, folder string) string {
	t.Helper()
	dir := t.TempDir()
	err := fs.WalkDir(zoo.FS(), folder, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(zoo.FS(), p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, p), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestShippedWeightsDigest: a backbone built from the weights built into
// the binary is the one built from the same files in a folder, the same
// ONNX graph and the same weights digest (which a model file records and
// checks), so a model made with either loads with the other. The digest
// depends on the contents: one changed value in a copy changes it. With
// the project's models folder beside the checkout, its backbones have
// the same digest too.
func TestShippedWeightsDigest(t *testing.T) {
	const shared = "../../../shared/models"
	for _, name := range []string{"mobilenetv2", "squeezenet"} {
		t.Run(name, func(t *testing.T) {
			folder, _ := ModelFolder(name)
			shipped, err := OpenBackboneFS(name, zoo.FS(), "built-in")
			if err != nil {
				t.Fatal(err)
			}
			dir := copyShipped(t, folder)
			for _, spec := range []string{name, name + ":" + filepath.Join(dir, folder)} {
				onDisk, err := OpenBackbone(spec, dir)
				if err != nil {
					t.Fatal(err)
				}
				if onDisk.Hash != shipped.Hash || !bytes.Equal(onDisk.ONNX, shipped.ONNX) {
					t.Errorf("%s from a folder: digest %s (graph %d bytes), built-in: %s (%d bytes)", spec, onDisk.Hash, len(onDisk.ONNX), shipped.Hash, len(shipped.ONNX))
				}
			}
			if _, err := os.Stat(filepath.Join(shared, folder)); err == nil {
				m, err := OpenBackbone(name, shared)
				if err != nil {
					t.Fatal(err)
				}
				if m.Hash != shipped.Hash {
					t.Errorf("%s: digest %s, built-in %s", shared, m.Hash, shipped.Hash)
				}
			} else {
				t.Logf("the project's models folder is absent (%v): compared with a copy of the built-in files only", err)
			}
			// flip the lowest bit of the last value of one tensor
			files, _ := filepath.Glob(filepath.Join(dir, folder, "*_weight.npy"))
			b, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)-4] ^= 1
			os.WriteFile(files[0], b, 0o644)
			changed, err := OpenBackbone(name, dir)
			if err != nil {
				t.Fatal(err)
			}
			if changed.Hash == shipped.Hash {
				t.Errorf("one changed value in %s: the digest %s did not change", files[0], changed.Hash)
			}
		})
	}
}

// TestOpenBackboneFSErrors: without a models file system the per-layer
// backbones need a path; a file system without the backbone's folder is
// fs.ErrNotExist naming where it looked; every error names the spec once.
func TestOpenBackboneFSErrors(t *testing.T) {
	for _, c := range []struct {
		spec     string
		models   fs.FS
		want     string
		notExist bool
	}{
		{"mobilenetv2", nil, "no weights folder given (mobilenetv2:DIR, or a models folder holding mobilenetv2-1.0)", false},
		{"squeezenet", fstest.MapFS{"mobilenetv2-1.0/x.npy": {}}, "mem/squeezenet1.1", true},
	} {
		_, err := OpenBackboneFS(c.spec, c.models, "mem")
		if err == nil || !strings.HasPrefix(err.Error(), "backbone "+c.spec+": ") || !strings.Contains(err.Error(), c.want) ||
			errors.Is(err, fs.ErrNotExist) != c.notExist || strings.Count(err.Error(), "backbone "+c.spec) != 1 {
			t.Errorf("%s: %v, want an error naming %q", c.spec, err, c.want)
		}
	}
	// the folders OpenBackboneFS reads are the ones zoo ships
	for name, folder := range map[string]string{"mobilenetv2": zoo.MobileNetV2, "squeezenet": zoo.SqueezeNet} {
		if f, ok := ModelFolder(name); !ok || f != folder {
			t.Errorf("ModelFolder(%s) = %q, %v; the shipped folder is %q", name, f, ok, folder)
		}
	}
}
