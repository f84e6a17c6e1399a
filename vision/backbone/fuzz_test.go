package backbone

import (
	"os"
	"path/filepath"
	"testing"
)

func seedFiles(f *testing.F, files ...string) {
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
}

// FuzzSafetensors: no safetensors bytes may panic the reader, and every
// tensor it returns has as many values as its shape says.
func FuzzSafetensors(f *testing.F) {
	seedFiles(f, "testdata/tiny_vit.safetensors", "testdata/tiny_resnet.safetensors")
	f.Add(safetensors("[-1]", make([]byte, 16)))
	f.Add(safetensors("[2,2]", make([]byte, 16)))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := ReadSafetensors(b, "fuzz.safetensors")
		if err != nil {
			return
		}
		for name := range w.Tensors {
			if _, err := w.Get(name); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// FuzzPyTorch: torch.save files (zip and legacy) through the claim
// checks and gopickle.
func FuzzPyTorch(f *testing.F) {
	seedFiles(f, "testdata/tiny_resnet.pth", "testdata/tiny_resnet_legacy.pth")
	f.Add(pthPickle(4, 4)) // a bare pickle: the legacy path
	dir := f.TempDir()
	p := filepath.Join(dir, "fuzz.pth")
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		w, err := LoadPyTorch(p)
		if err != nil {
			return
		}
		for name := range w.Tensors {
			if _, err := w.Get(name); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// FuzzAugReg: an augreg .npz read as a checkpoint and converted to timm
// names must never panic.
func FuzzAugReg(f *testing.F) {
	seedFiles(f, "testdata/tiny_vit_augreg.npz")
	dir := f.TempDir()
	p := filepath.Join(dir, "fuzz.npz")
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		w, err := LoadCheckpoint(p)
		if err != nil {
			return
		}
		if cw, err := FromAugReg(w); err == nil {
			ViT(cw, 3)
		}
	})
}

// FuzzNPYWeights: the .npy files of a backbone weight directory.
func FuzzNPYWeights(f *testing.F) {
	files, _ := filepath.Glob("../../format/npz/testdata/*.npy")
	seedFiles(f, files...)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, "w.npy"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		w, err := LoadNPYDir(dir)
		if err != nil {
			return
		}
		if _, err := w.Get("w"); err != nil {
			t.Fatal(err)
		}
	})
}
