package backbone

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flycl/flycl/imageio"
	"github.com/flycl/flycl/npz"
	"github.com/flycl/flycl/transform"
)

const shared = "../../shared"

func session(t *testing.T, m *Model) *Session {
	t.Helper()
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

func sharedModel(t *testing.T, dir string, build func(*Weights) (*Model, error)) *Model {
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
		build func(*Weights) (*Model, error)
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
