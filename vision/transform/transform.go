package transform

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/flycl/flycl/vision/imageio"
)

// ShorterSide returns the size torchvision's Resize(size) gives an image
// of w×h: the shorter side becomes size and the longer one
// int(size * long / short), truncated.
func ShorterSide(w, h, size int) (int, int) {
	if w <= h {
		return size, int(float64(size) * float64(h) / float64(w))
	}
	return int(float64(size) * float64(w) / float64(h)), size
}

// CenterCrop returns the centred cw×ch region, with torchvision's offsets
// int(round((H - ch) / 2)) (round half to even). An image smaller than the
// crop is first padded with black on both sides, as torchvision does.
func CenterCrop(src *imageio.RGB, cw, ch int) *imageio.RGB {
	if src.W < cw || src.H < ch {
		pw, ph := max(cw, src.W), max(ch, src.H)
		padL, padT := (pw-src.W)/2, (ph-src.H)/2
		p := imageio.NewRGB(pw, ph)
		for y := 0; y < src.H; y++ {
			copy(p.Pix[3*((y+padT)*pw+padL):], src.Pix[3*y*src.W:3*(y+1)*src.W])
		}
		src = p
	}
	top := int(math.RoundToEven(float64(src.H-ch) / 2))
	left := int(math.RoundToEven(float64(src.W-cw) / 2))
	out := imageio.NewRGB(cw, ch)
	for y := 0; y < ch; y++ {
		copy(out.Pix[3*y*cw:3*(y+1)*cw], src.Pix[3*((y+top)*src.W+left):])
	}
	return out
}

// Preset is an evaluation transform: shorter side to Resize with Filter,
// centre crop Crop×Crop, scale to [0,1], normalise with Mean and Std.
type Preset struct {
	Name      string
	Resize    int
	Filter    Filter
	Crop      int
	Mean, Std [3]float32
	Note      string
}

var (
	imagenetMean = [3]float32{0.485, 0.456, 0.406}
	imagenetStd  = [3]float32{0.229, 0.224, 0.225}
	half         = [3]float32{0.5, 0.5, 0.5}
	zero         = [3]float32{0, 0, 0}
	one          = [3]float32{1, 1, 1}
)

// Presets are the named transforms of the paper's pipelines.
var Presets = map[string]Preset{
	"flycl-cifar":     {"flycl-cifar", 224, Bicubic, 224, half, half, "Fly-CL reference code, CIFAR, ViT normalisation [-1,1]"},
	"flycl":           {"flycl", 256, Bicubic, 224, half, half, "Fly-CL reference code, other data sets, ViT normalisation"},
	"flycl-cifar-in":  {"flycl-cifar-in", 224, Bicubic, 224, imagenetMean, imagenetStd, "Fly-CL reference code, CIFAR, ResNet (ImageNet) normalisation"},
	"flycl-in":        {"flycl-in", 256, Bicubic, 224, imagenetMean, imagenetStd, "Fly-CL reference code, other data sets, ResNet normalisation"},
	"timm-vit":        {"timm-vit", 248, Bicubic, 224, half, half, "timm eval transform of vit_base_patch16_224.augreg2_in21k_ft_in1k"},
	"tv-resnet50-v2":  {"tv-resnet50-v2", 232, Bilinear, 224, imagenetMean, imagenetStd, "torchvision ResNet50_Weights.IMAGENET1K_V2 eval transform"},
	"imagenet":        {"imagenet", 256, Bilinear, 224, imagenetMean, imagenetStd, "classic ImageNet eval: 256 bilinear, crop 224 (the ONNX model zoo's)"},
	"imagenet-nonorm": {"imagenet-nonorm", 256, Bilinear, 224, zero, one, "imagenet without normalisation: pixels scaled to [0,1] only (the paper's w/o norm ablation)"},
}

// PresetNames lists the presets, sorted.
func PresetNames() []string {
	var n []string
	for k := range Presets {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// LookupPreset returns the named preset.
func LookupPreset(name string) (Preset, error) {
	p, ok := Presets[name]
	if !ok {
		return p, fmt.Errorf("transform: unknown preset %q (known: %s)", name, strings.Join(PresetNames(), ", "))
	}
	return p, nil
}

// Apply resizes and crops img (8-bit, as PIL would).
func (p Preset) Apply(img *imageio.RGB) *imageio.RGB {
	w, h := ShorterSide(img.W, img.H, p.Resize)
	return CenterCrop(Resize(img, w, h, p.Filter), p.Crop, p.Crop)
}

// Tensor applies the preset and writes the normalised 3×Crop×Crop float32
// CHW tensor into dst (allocated when nil or short): v/255 then
// (v − mean)/std in float32, as torchvision's ToTensor and Normalize do.
// It computes only the cropped region (see Preprocessor; a goroutine that
// converts many images should keep one Preprocessor instead).
func (p Preset) Tensor(img *imageio.RGB, dst []float32) []float32 {
	return p.NewPreprocessor().Tensor(img, dst)
}

// ToTensor converts an RGB image to a normalised float32 CHW tensor.
func ToTensor(img *imageio.RGB, mean, std [3]float32, dst []float32) []float32 {
	n := img.W * img.H
	if len(dst) < 3*n {
		dst = make([]float32, 3*n)
	}
	dst = dst[:3*n]
	for c := 0; c < 3; c++ {
		out := dst[c*n : (c+1)*n]
		m, s := mean[c], std[c]
		for i := range out {
			v := float32(img.Pix[3*i+c]) / 255
			out[i] = (v - m) / s
		}
	}
	return dst
}
