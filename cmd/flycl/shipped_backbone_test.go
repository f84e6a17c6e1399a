package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/cmd/internal/cli"
	"github.com/flycl/flycl/format/features"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/vision/backbone/zoo"
	"github.com/flycl/flycl/vision/extract"
)

// colourImages writes n noisy 48×48 PNG photos of each colour class into
// root/<class>/ (the layout a user teaches from); seed varies the noise.
func colourImages(t *testing.T, root string, n int, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	for class, c := range map[string]color.NRGBA{"red": {200, 40, 30, 255}, "blue": {30, 60, 210, 255}} {
		dir := filepath.Join(root, class)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			img := image.NewNRGBA(image.Rect(0, 0, 48, 48))
			for y := 0; y < 48; y++ {
				for x := 0; x < 48; x++ {
					jit := func(v uint8) uint8 { return uint8(min(255, max(0, int(v)+r.IntN(81)-40))) }
					img.SetNRGBA(x, y, color.NRGBA{jit(c.R), jit(c.G), jit(c.B), 255})
				}
			}
			var b bytes.Buffer
			if err := png.Encode(&b, img); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.png", i)), b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestShippedBackboneByDefault: on a machine with no models folder and
// FLYCL_MODELS unset, images without --backbone go through the MobileNetV2
// weights built into the binary: learn records backbone "mobilenetv2" and
// the built-in weights' digest, predict (which reopens the model's
// backbone) names held-out photos' classes, and extract without
// --backbone writes 1280-d MobileNetV2 features.
func TestShippedBackboneByDefault(t *testing.T) {
	lib, err := filepath.Abs(ortLib(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(cli.EnvModels, "")
	os.Unsetenv(cli.EnvModels) // unset, not empty: restored by Setenv's cleanup
	t.Chdir(t.TempDir())       // no ../shared/models beside the working folder
	if d := cli.ModelsDir(); d != "" {
		t.Fatalf("a models folder resolved: %q", d)
	}
	train, test := t.TempDir(), t.TempDir()
	colourImages(t, train, 5, 1)
	colourImages(t, test, 3, 2)
	model := filepath.Join(t.TempDir(), "cam.flycl")
	out, err := runCLI(t, "learn", "--model", model, "--data", "folder:"+train, "--ort-lib", lib, "--cache", "", "--quiet",
		"--m", "2000", "--p", "50", "--k", "600", "--lambdas", "1,10,100,1000")
	if err != nil || !strings.Contains(out, "classes added (2): blue, red") {
		t.Fatalf("learn without --backbone: %v\n%s", err, out)
	}
	f, err := modelfile.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	builtin, err := extract.OpenBackboneFS("mobilenetv2", zoo.FS(), "built-in")
	if err != nil {
		t.Fatal(err)
	}
	if p := f.Pipeline; p == nil || p.Backbone != "mobilenetv2" || p.WeightsHash != builtin.Hash || p.Dim != 1280 {
		t.Fatalf("model pipeline %+v, want backbone mobilenetv2, weights %s, d=1280", p, builtin.Hash)
	}
	imgs, _ := filepath.Glob(filepath.Join(test, "*", "*.png"))
	out, err = runCLI(t, append([]string{"predict", "--model", model, "--ort-lib", lib, "--quiet", "--format", "json", "--top", "1"}, imgs...)...)
	if err != nil {
		t.Fatalf("predict: %v\n%s", err, out)
	}
	var got struct {
		Predictions []prediction `json:"predictions"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Predictions) != len(imgs) {
		t.Fatalf("predict output (%v):\n%s", err, out)
	}
	for _, p := range got.Predictions {
		if want := filepath.Base(filepath.Dir(p.Input)); len(p.Top) == 0 || p.Top[0].Name != want {
			t.Errorf("%s: predicted %+v, want %s", p.Input, p.Top, want)
		}
	}
	feat := filepath.Join(t.TempDir(), "feat")
	if _, err := runCLI(t, "extract", "--data", "folder:"+train, "--ort-lib", lib, "--cache", "", "--quiet", "--out", feat); err != nil {
		t.Fatalf("extract without --backbone: %v", err)
	}
	s, err := features.Load(filepath.Join(feat, "train.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if s.N != 10 || s.D != 1280 || !strings.Contains(s.Pipeline, builtin.Hash) {
		t.Fatalf("extract: %d×%d features, pipeline %s; want 10×1280 from the built-in MobileNetV2 (%s)", s.N, s.D, s.Pipeline, builtin.Hash)
	}
}

// TestHelpWeights: "flycl help weights" carries the attribution and the
// licence text of the built-in weights (the files in vision/backbone/zoo), as
// Apache-2.0 asks of every copy of the binary.
func TestHelpWeights(t *testing.T) {
	help := weightsHelp().Long
	for _, name := range []string{"NOTICE", "LICENSE"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "vision", "backbone", "zoo", name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(help, string(b)) {
			t.Errorf("flycl help weights does not hold vision/backbone/zoo/%s", name)
		}
	}
}

// TestOpenBackboneResolution: a models folder that resolves (FLYCL_MODELS)
// is read; FLYCL_MODELS set but empty uses the built-in weights. Both give
// the built-in digest for a copy of the same files, and a folder with
// other weights gives another digest, so the folder was really read.
func TestOpenBackboneResolution(t *testing.T) {
	builtin, err := extract.OpenBackboneFS("squeezenet", zoo.FS(), "built-in")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sub := filepath.Join(dir, zoo.SqueezeNet)
	os.MkdirAll(sub, 0o755)
	files, _ := fs.Glob(zoo.FS(), zoo.SqueezeNet+"/*.npy")
	for i, f := range files {
		b, _ := fs.ReadFile(zoo.FS(), f)
		if i == 0 {
			b = append([]byte(nil), b...)
			b[len(b)-1] ^= 0x40 // other weights: one value changed
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	for _, c := range []struct {
		models string
		same   bool
	}{{"", true}, {dir, false}} {
		t.Setenv(cli.EnvModels, c.models)
		m, err := cli.OpenBackbone("squeezenet")
		if err != nil {
			t.Fatal(err)
		}
		if (m.Hash == builtin.Hash) != c.same {
			t.Errorf("%s=%q: digest %s, built-in %s; want same=%v", cli.EnvModels, c.models, m.Hash, builtin.Hash, c.same)
		}
	}
	t.Setenv(cli.EnvModels, filepath.Join(dir, "none"))
	if _, err := cli.OpenBackbone("squeezenet"); err == nil || !strings.Contains(err.Error(), "none") {
		t.Errorf("a models folder without the backbone: %v, want an error naming it", err)
	}
}
