package main

import (
	"bytes"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/store"
)

// writePhotos writes n random 32×32 PNGs into DIR/<class>/ for each class.
func writePhotos(t *testing.T, dir string, n int, classes ...string) {
	t.Helper()
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range classes {
		if err := os.MkdirAll(filepath.Join(dir, c), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			img := image.NewNRGBA(image.Rect(0, 0, 32, 32))
			for j := range img.Pix {
				img.Pix[j] = uint8(r.IntN(256))
			}
			var b bytes.Buffer
			if err := png.Encode(&b, img); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, c, string(rune('a'+i))+".png"), b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestNewModelConfig: a model learn creates from images has
// deploy.DefaultImageConfig for the backbone's d, a given --m with
// k = 0.3·m, and one created from feature vectors the paper's
// flycl.DefaultConfig.
func TestNewModelConfig(t *testing.T) {
	lib := ortLib(t)
	photos := t.TempDir()
	writePhotos(t, photos, 3, "red", "blue")
	dir := t.TempDir()
	load := func(path string) flycl.Config {
		t.Helper()
		m, err := store.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return m.Model.Config()
	}
	common := []string{"--data", "folder:" + photos, "--backbone", "squeezenet", "--ort-lib", lib, "--cache", "", "--quiet"}
	img := filepath.Join(dir, "img.flycl")
	if out, err := runCLI(t, append([]string{"learn", "--model", img}, common...)...); err != nil {
		t.Fatalf("learn: %v\n%s", err, out)
	}
	want := deploy.DefaultImageConfig(512) // SqueezeNet's features
	if got := load(img); got.M != want.M || got.K != want.K || got.P != want.P || !got.WidenGrid || got.LambdaScale != flycl.LambdaRelative {
		t.Errorf("new model from images: %+v, want %+v", got, want)
	}
	big := filepath.Join(dir, "big.flycl")
	if out, err := runCLI(t, append([]string{"learn", "--model", big, "--m", "2500"}, common...)...); err != nil {
		t.Fatalf("learn --m 2500: %v\n%s", err, out)
	}
	if got := load(big); got.M != 2500 || got.K != 750 {
		t.Errorf("--m 2500: m=%d k=%d, want 2500, 750", got.M, got.K)
	}
	feat := filepath.Join(dir, "train.npz")
	blobs(t, feat, 1, 400, 20, "cat", "dog")
	fm := filepath.Join(dir, "feat.flycl")
	if out, err := runCLI(t, "learn", "--model", fm, "--features", feat, "--quiet"); err != nil {
		t.Fatalf("learn features: %v\n%s", err, out)
	}
	if got, d := load(fm), flycl.DefaultConfig(); got.M != d.M || got.K != d.K || got.WidenGrid {
		t.Errorf("new model from features: %+v, want the paper's %+v", got, d)
	}
}
