package backbone

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl/format/npz"
	"github.com/flycl/flycl/vision/imageio"
	"github.com/flycl/flycl/vision/transform"
)

const shared = "../../../shared"

func session(t *testing.T, m *Model) *Session {
	t.Helper()
	if err := Init(testLibrary()); err != nil {
		t.Skipf("%v", err)
	}
	s, err := m.NewSession(0)
	if errors.Is(err, ErrNoRuntime) {
		t.Skipf("%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func sharedModel(t *testing.T, dir string, build func(*Weights, ...Option) (*Model, error)) *Model {
	t.Helper()
	p := filepath.Join(shared, "models", dir)
	if _, err := os.Stat(p); err != nil {
		t.Skip("shared models not available")
	}
	w, err := LoadNPYDir(p)
	if err != nil {
		t.Fatal(err)
	}
	m, err := build(w)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSqueezeNetTop1 classifies the 500 ImageNet sample photos (the k-th
// file, sorted, is class 2k). An independent NumPy implementation measured
// 61.4% top-1 on all 1000 photos of which these are half (256 bilinear,
// crop 224); on 500 images the standard error is about 2.2 points.
func TestSqueezeNetTop1(t *testing.T) {
	m := sharedModel(t, "squeezenet1.1", SqueezeNet)
	s := session(t, m)
	files, _ := filepath.Glob(filepath.Join(shared, "data", "imagenet-sample-500", "*.JPEG"))
	slices.Sort(files)
	if len(files) != 500 {
		t.Fatalf("%d images", len(files))
	}
	hit := 0
	const batch = 25
	x := make([]float32, batch*3*224*224)
	for lo := 0; lo < len(files); lo += batch {
		for i := 0; i < batch; i++ {
			img, err := imageio.DecodeFile(files[lo+i])
			if err != nil {
				t.Fatal(err)
			}
			m.Preset.Tensor(img, x[i*3*224*224:(i+1)*3*224*224])
		}
		out, err := s.Run(x, batch)
		if err != nil {
			t.Fatal(err)
		}
		logits := out[1]
		for i := 0; i < batch; i++ {
			row := logits[i*1000 : (i+1)*1000]
			best := 0
			for c, v := range row {
				if v > row[best] {
					best = c
				}
			}
			if best == 2*(lo+i) {
				hit++
			}
		}
	}
	acc := float64(hit) / 500
	t.Logf("SqueezeNet 1.1 top-1 on the 500-image sample: %.1f%%", 100*acc)
	if acc < 0.55 || acc > 0.68 {
		t.Errorf("top-1 %.1f%% is far from the reference 61.4%%", 100*acc)
	}
}

// TestCNNsMatchTorch compares SqueezeNet's and MobileNetV2's outputs on 4
// real photos with an independent torch.nn.functional implementation
// (testdata/gen_cnn.py). Tolerance 1e-4 of each output's largest magnitude:
// both sides run float32 convolutions with different summation orders.
func TestCNNsMatchTorch(t *testing.T) {
	ref, err := npz.Open("testdata/cnn_reference.npz")
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	names, _, err := ref.Strings("files")
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, len(names)*3*224*224)
	preset := transform.Presets["imagenet"]
	for i, n := range names {
		img, err := imageio.DecodeFile(filepath.Join(shared, "data", "imagenet-sample-500", n))
		if err != nil {
			t.Skip("shared images not available")
		}
		preset.Tensor(img, x[i*3*224*224:(i+1)*3*224*224])
	}
	for _, c := range []struct {
		dir   string
		build func(*Weights, ...Option) (*Model, error)
		refs  []string
	}{
		{"squeezenet1.1", SqueezeNet, []string{"squeezenet_features", "squeezenet_logits"}},
		{"mobilenetv2-1.0", MobileNetV2, []string{"mobilenetv2_features"}},
	} {
		m := sharedModel(t, c.dir, c.build)
		out, err := session(t, m).Run(x, len(names))
		if err != nil {
			t.Fatal(err)
		}
		for i, rn := range c.refs {
			want, _, err := ref.Float32(rn)
			if err != nil {
				t.Fatal(err)
			}
			var scale float64
			for _, v := range want {
				scale = math.Max(scale, math.Abs(float64(v)))
			}
			var worst float64
			for j := range want {
				worst = math.Max(worst, math.Abs(float64(out[i][j]-want[j])))
			}
			t.Logf("%s: max |difference| %.2e (scale %.2f)", rn, worst, scale)
			if worst > 1e-4*scale {
				t.Errorf("%s differs from torch by %.2e (scale %.2f)", rn, worst, scale)
			}
		}
	}
}

// formulaInputs is the input of testdata/gen_tiny.py:
// x[n,c,h,w] = sin(0.1 (h+1)(c+1)) cos(0.07 (w+1)) + 0.1 n.
func formulaInputs(n, size int) []float32 {
	x := make([]float32, n*3*size*size)
	i := 0
	for b := 0; b < n; b++ {
		for c := 0; c < 3; c++ {
			for h := 0; h < size; h++ {
				for w := 0; w < size; w++ {
					x[i] = float32(math.Sin(0.1*float64((h+1)*(c+1)))*math.Cos(0.07*float64(w+1)) + 0.1*float64(b))
					i++
				}
			}
		}
	}
	return x
}

// TestTinyCheckpointsMatchTorch: ResNet (torchvision Bottleneck blocks, BN
// with random statistics) and ViT (timm structure) with random weights,
// read from real checkpoint formats (.pth zip and legacy, safetensors),
// against PyTorch's outputs (testdata/gen_tiny.py); 1e-4 relative.
func TestTinyCheckpointsMatchTorch(t *testing.T) {
	ref, err := npz.Open("testdata/tiny_reference.npz")
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	for _, c := range []struct {
		file  string
		build func(*Weights, ...Option) (*Model, error)
		n     int
		refs  map[string]string
	}{
		{"tiny_resnet.pth", ResNet50, 2, map[string]string{"features": "resnet_features", "logits": "resnet_logits"}},
		{"tiny_resnet_legacy.pth", ResNet50, 2, map[string]string{"features": "resnet_features"}},
		{"tiny_resnet.safetensors", ResNet50, 2, map[string]string{"logits": "resnet_logits"}},
		{"tiny_vit.safetensors", func(w *Weights, _ ...Option) (*Model, error) { return ViT(w, 3) }, 3,
			map[string]string{"features": "vit_features", "logits": "vit_logits", "blocks": "vit_blocks"}},
		{"tiny_vit.pth", func(w *Weights, _ ...Option) (*Model, error) { return ViT(w, 3) }, 3, map[string]string{"features": "vit_features"}},
		{"tiny_vit_augreg.npz", func(w *Weights, _ ...Option) (*Model, error) {
			t, err := FromAugReg(w)
			if err != nil {
				return nil, err
			}
			return ViT(t, 3)
		}, 3, map[string]string{"features": "vit_features", "logits": "vit_logits"}},
	} {
		w, err := LoadCheckpoint(filepath.Join("testdata", c.file))
		if err != nil {
			t.Fatal(err)
		}
		m, err := c.build(w)
		if err != nil {
			t.Fatal(c.file, err)
		}
		out, err := session(t, m).Run(formulaInputs(c.n, m.Size), c.n)
		if err != nil {
			t.Fatal(c.file, err)
		}
		for output, rn := range c.refs {
			i, err := m.OutputIndex(output)
			if err != nil {
				t.Fatal(err)
			}
			want, _, _ := ref.Float32(rn)
			var scale, worst float64
			for j := range want {
				scale = math.Max(scale, math.Abs(float64(want[j])))
				worst = math.Max(worst, math.Abs(float64(out[i][j]-want[j])))
			}
			if len(out[i]) != len(want) || worst > 1e-4*scale {
				t.Errorf("%s %s: max difference %.2e (scale %.2f, %d vs %d values)", c.file, output, worst, scale, len(out[i]), len(want))
			}
		}
	}
}

func TestCheckpointErrors(t *testing.T) {
	dir := t.TempDir()
	good, _ := os.ReadFile("testdata/tiny_vit.safetensors")
	cut := filepath.Join(dir, "cut.safetensors")
	os.WriteFile(cut, good[:len(good)/2], 0o644)
	if _, err := LoadCheckpoint(cut); err == nil {
		t.Error("truncated safetensors: no error")
	}
	pth, _ := os.ReadFile("testdata/tiny_resnet.pth")
	cutp := filepath.Join(dir, "cut.pth")
	os.WriteFile(cutp, pth[:len(pth)/3], 0o644)
	if _, err := LoadCheckpoint(cutp); err == nil {
		t.Error("truncated .pth: no error")
	}
	if _, err := LoadCheckpoint(filepath.Join(dir, "x.ckpt")); err == nil {
		t.Error("unknown format: no error")
	}
	// a ViT checkpoint is not a ResNet, and wrong shapes are named
	w, _ := LoadCheckpoint("testdata/tiny_vit.safetensors")
	if _, err := ResNet50(w); err == nil {
		t.Error("ViT weights as ResNet: no error")
	}
	if _, err := ViT(w, 5); err == nil {
		t.Error("24 wide with 5 heads: no error")
	}
	bad := &Weights{Source: "bad", Tensors: map[string]Tensor{}}
	for k, v := range w.Tensors {
		bad.Tensors[k] = v
	}
	qkv := bad.Tensors["blocks.1.attn.qkv.weight"]
	bad.Tensors["blocks.1.attn.qkv.weight"] = Tensor{Shape: []int64{72, 23}, Data: qkv.Data[:72*23]}
	if _, err := ViT(bad, 3); err == nil || !strings.Contains(err.Error(), "blocks.1.attn.qkv.weight") {
		t.Errorf("wrong-shaped tensor: %v", err)
	}
	delete(bad.Tensors, "norm.weight")
	bad.Tensors["blocks.1.attn.qkv.weight"] = qkv
	if _, err := ViT(bad, 3); err == nil || !strings.Contains(err.Error(), "norm.weight") {
		t.Errorf("missing tensor: %v", err)
	}
}

// A model saved as .onnx and read back as a user model gives the same
// outputs; a missing output is named in the error.
func TestONNXFile(t *testing.T) {
	w, err := LoadCheckpoint("testdata/tiny_resnet.pth")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ResNet50(w)
	if err != nil {
		t.Fatal(err)
	}
	want, err := session(t, m).Run(formulaInputs(2, 224), 2)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "tiny.onnx")
	os.WriteFile(p, m.ONNX, 0o644)
	u, err := FromONNXFile(p, "logits")
	if err != nil {
		t.Fatal(err)
	}
	if u.Dim() != 5 || u.Size != 224 {
		t.Fatalf("dim %d size %d", u.Dim(), u.Size)
	}
	got, err := session(t, u).Run(formulaInputs(2, 224), 2)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got[0], want[1]) {
		t.Errorf("user ONNX logits %v, built %v", got[0], want[1])
	}
	if _, err := FromONNXFile(p, "nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("missing output: %v", err)
	}
	os.WriteFile(p, []byte("not onnx"), 0o644)
	if _, err := FromONNXFile(p, ""); err == nil {
		t.Error("garbage file: no error")
	}
}
