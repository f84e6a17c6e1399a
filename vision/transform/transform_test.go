package transform

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"codeberg.org/sbinet/npyio/npy"

	"github.com/flycl/flycl/vision/imageio"
)

const fixtures = "../imageio/testdata"

func readNPY[T uint8 | float32](t *testing.T, path string) ([]int, []T) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := npy.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var v []T
	if err := r.Read(&v); err != nil {
		t.Fatal(err)
	}
	return r.Header.Descr.Shape, v
}

func decode(t *testing.T, name string) *imageio.RGB {
	t.Helper()
	img, err := imageio.DecodeFile(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func compare(t *testing.T, what string, got *imageio.RGB, shape []int, want []uint8) {
	t.Helper()
	if got.H != shape[0] || got.W != shape[1] {
		t.Fatalf("%s: %d×%d, want %d×%d", what, got.W, got.H, shape[1], shape[0])
	}
	maxd, n := 0, 0
	for i := range want {
		d := int(got.Pix[i]) - int(want[i])
		if d < 0 {
			d = -d
		}
		if d > 0 {
			n++
		}
		maxd = max(maxd, d)
	}
	if maxd != 0 {
		t.Errorf("%s: %d values differ from Pillow, max %d levels", what, n, maxd)
	}
}

// TestResizeMatchesPillow: Pillow 9.4's Image.resize, bilinear and bicubic,
// shrinking and enlarging each axis independently. Must be exact.
func TestResizeMatchesPillow(t *testing.T) {
	for _, src := range []string{"rgb_83x52_s2.jpg", "rgb_40x61_s1.jpg", "rgb_33x19_s2.jpg"} {
		img := decode(t, src)
		for _, f := range []Filter{Bilinear, Bicubic} {
			for _, sz := range [][2]int{{29, 17}, {100, 71}, {83, 20}, {12, 52}} {
				shape, want := readNPY[uint8](t, filepath.Join(fixtures, fmt.Sprintf("%s.%v_%dx%d.npy", src, f, sz[0], sz[1])))
				compare(t, fmt.Sprintf("%s %v %v", src, f, sz), Resize(img, sz[0], sz[1], f), shape, want)
			}
		}
	}
}

// TestTorchvisionTransforms: Resize(shorter side) + CenterCrop, and the
// full ToTensor + Normalize tensor, against torchvision 0.14.
func TestTorchvisionTransforms(t *testing.T) {
	img := decode(t, "rgb_83x52_s2.jpg")
	for _, c := range []struct {
		size, crop int
		f          Filter
	}{{24, 20, Bicubic}, {40, 33, Bilinear}, {70, 64, Bicubic}} {
		path := filepath.Join(fixtures, fmt.Sprintf("tv_resize%d_%v_crop%d.npy", c.size, c.f, c.crop))
		shape, want := readNPY[uint8](t, path)
		p := Preset{Resize: c.size, Filter: c.f, Crop: c.crop}
		compare(t, path, p.Apply(img), shape, want)
	}
	shape, want := readNPY[float32](t, filepath.Join(fixtures, "tv_tensor_resize40_bicubic_crop33_imagenet.npy"))
	p := Preset{Resize: 40, Filter: Bicubic, Crop: 33, Mean: imagenetMean, Std: imagenetStd}
	got := p.Tensor(img, nil)
	if len(got) != len(want) || shape[0] != 3 {
		t.Fatalf("tensor %d values, want %v", len(got), shape)
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("tensor[%d] = %v, torchvision %v", i, got[i], want[i])
		}
	}
}

func TestShorterSideAndCrop(t *testing.T) {
	for _, c := range []struct{ w, h, s, ww, wh int }{
		{500, 375, 256, 341, 256}, {375, 500, 256, 256, 341}, {32, 32, 224, 224, 224}, {1000, 3, 10, 3333, 10},
	} {
		if w, h := ShorterSide(c.w, c.h, c.s); w != c.ww || h != c.wh {
			t.Errorf("ShorterSide(%d,%d,%d) = %d,%d want %d,%d", c.w, c.h, c.s, w, h, c.ww, c.wh)
		}
	}
	// offsets round half to even: (5-2)/2 = 1.5 -> 2, (7-2)/2 = 2.5 -> 2
	img := imageio.NewRGB(7, 5)
	for i := range img.Pix {
		img.Pix[i] = uint8(i / 3)
	}
	c := CenterCrop(img, 2, 2)
	if r, _, _ := c.At(0, 0); r != uint8(2*7+2) {
		t.Errorf("crop origin pixel %d, want %d", r, 2*7+2)
	}
	// padding when the crop is larger than the image (torchvision pads with 0)
	p := CenterCrop(imageio.NewRGB(1, 1), 3, 3)
	if p.W != 3 || p.H != 3 {
		t.Errorf("padded crop %d×%d", p.W, p.H)
	}
	if _, err := LookupPreset("nope"); err == nil {
		t.Error("unknown preset: no error")
	}
	for _, name := range PresetNames() {
		pr, _ := LookupPreset(name)
		if pr.Crop != 224 || pr.Std[0] == 0 {
			t.Errorf("%s: %+v", name, pr)
		}
	}
}

// TestNoNormPresetIsScaledPixels checks the w/o-norm ablation's preset: the
// same geometry as "imagenet", and the tensor is the cropped pixels / 255.
func TestNoNormPresetIsScaledPixels(t *testing.T) {
	base, nonorm := Presets["imagenet"], Presets["imagenet-nonorm"]
	if base.Resize != nonorm.Resize || base.Crop != nonorm.Crop || base.Filter != nonorm.Filter {
		t.Fatalf("geometry differs: %+v vs %+v", base, nonorm)
	}
	img := &imageio.RGB{W: 300, H: 260, Pix: make([]uint8, 300*260*3)}
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7 % 251)
	}
	crop := nonorm.Apply(img)
	got := nonorm.Tensor(img, nil)
	plane := crop.W * crop.H
	for c := 0; c < 3; c++ {
		for i := 0; i < plane; i++ {
			if want := float32(crop.Pix[i*3+c]) / 255; got[c*plane+i] != want {
				t.Fatalf("channel %d pixel %d: %g want %g", c, i, got[c*plane+i], want)
			}
		}
	}
}

// TestPreprocessorMatchesResizeCrop: the fused, crop-only Preprocessor
// gives bit for bit the tensor of the reference path (Resize, tested
// against Pillow above, then CenterCrop and ToTensor, tested against
// torchvision), for every preset and source sizes that shrink, enlarge,
// keep either side, and need padding; one Preprocessor is reused across
// sizes (its cached plan must follow the size).
func TestPreprocessorMatchesResizeCrop(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := [][2]int{{32, 32}, {500, 375}, {375, 500}, {256, 256}, {256, 300}, {300, 256}, {224, 224},
		{33, 19}, {1, 1}, {3, 40}, {40, 3}, {248, 240}, {232, 500}, {32, 32}}
	for _, name := range PresetNames() {
		p := Presets[name]
		for _, crop := range []int{p.Crop, 7} {
			p.Crop = crop
			q := p.NewPreprocessor()
			for _, sz := range sizes {
				img := imageio.NewRGB(sz[0], sz[1])
				for i := range img.Pix {
					img.Pix[i] = uint8(r.IntN(256))
				}
				want := ToTensor(p.Apply(img), p.Mean, p.Std, nil)
				got := q.Tensor(img, make([]float32, 3*crop*crop))
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s crop %d, %d×%d: value %d = %v, reference %v", name, crop, sz[0], sz[1], i, got[i], want[i])
					}
				}
			}
		}
	}
}
