package backbone

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// RandomResNet50 returns torchvision ResNet-50 shaped weights drawn from a
// seed (He-normal convolutions, identity batch norms), for speed tests.
func RandomResNet50(seed uint64) *Weights {
	r := rand.New(rand.NewPCG(seed, 50))
	w := &Weights{Source: "random resnet50", Tensors: map[string]Tensor{}}
	conv := func(name string, o, i, k int64) {
		t := Tensor{Shape: []int64{o, i, k, k}, Data: make([]float32, o*i*k*k)}
		sd := math.Sqrt(2 / float64(i*k*k))
		for j := range t.Data {
			t.Data[j] = float32(sd * r.NormFloat64())
		}
		w.Tensors[name+".weight"] = t
	}
	bn := func(name string, c int64) {
		ones, zeros := make([]float32, c), make([]float32, c)
		for j := range ones {
			ones[j] = 1
		}
		for _, s := range []string{"weight", "running_var"} {
			w.Tensors[name+"."+s] = Tensor{Shape: []int64{c}, Data: ones}
		}
		for _, s := range []string{"bias", "running_mean"} {
			w.Tensors[name+"."+s] = Tensor{Shape: []int64{c}, Data: zeros}
		}
	}
	conv("conv1", 64, 3, 7)
	bn("bn1", 64)
	in := int64(64)
	for l, blocks := range []int{3, 4, 6, 3} {
		planes := int64(64) << l
		for b := 0; b < blocks; b++ {
			p := fmt.Sprintf("layer%d.%d.", l+1, b)
			conv(p+"conv1", planes, in, 1)
			bn(p+"bn1", planes)
			conv(p+"conv2", planes, planes, 3)
			bn(p+"bn2", planes)
			conv(p+"conv3", 4*planes, planes, 1)
			bn(p+"bn3", 4*planes)
			if b == 0 {
				conv(p+"downsample.0", 4*planes, in, 1)
				bn(p+"downsample.1", 4*planes)
			}
			in = 4 * planes
		}
	}
	fc := Tensor{Shape: []int64{1000, 2048}, Data: make([]float32, 1000*2048)}
	for j := range fc.Data {
		fc.Data[j] = float32(0.01 * r.NormFloat64())
	}
	w.Tensors["fc.weight"] = fc
	w.Tensors["fc.bias"] = Tensor{Shape: []int64{1000}, Data: make([]float32, 1000)}
	return w
}

// RandomViTB16 returns timm vit_base_patch16_224 shaped weights drawn
// from a seed, for speed tests.
func RandomViTB16(seed uint64) *Weights {
	r := rand.New(rand.NewPCG(seed, 16))
	w := &Weights{Source: "random vit_base_patch16_224", Tensors: map[string]Tensor{}}
	rnd := func(name string, sd float64, shape ...int64) {
		t := Tensor{Shape: shape, Data: make([]float32, numel(shape))}
		for j := range t.Data {
			t.Data[j] = float32(sd * r.NormFloat64())
		}
		w.Tensors[name] = t
	}
	ones := func(name string, n int64) {
		t := Tensor{Shape: []int64{n}, Data: make([]float32, n)}
		for j := range t.Data {
			t.Data[j] = 1
		}
		w.Tensors[name] = t
	}
	const d = 768
	rnd("patch_embed.proj.weight", 0.02, d, 3, 16, 16)
	rnd("patch_embed.proj.bias", 0, d)
	rnd("cls_token", 0.02, 1, 1, d)
	rnd("pos_embed", 0.02, 1, 197, d)
	for i := 0; i < 12; i++ {
		p := fmt.Sprintf("blocks.%d.", i)
		ones(p+"norm1.weight", d)
		rnd(p+"norm1.bias", 0, d)
		ones(p+"norm2.weight", d)
		rnd(p+"norm2.bias", 0, d)
		rnd(p+"attn.qkv.weight", 0.02, 3*d, d)
		rnd(p+"attn.qkv.bias", 0, 3*d)
		rnd(p+"attn.proj.weight", 0.02, d, d)
		rnd(p+"attn.proj.bias", 0, d)
		rnd(p+"mlp.fc1.weight", 0.02, 4*d, d)
		rnd(p+"mlp.fc1.bias", 0, 4*d)
		rnd(p+"mlp.fc2.weight", 0.02, d, 4*d)
		rnd(p+"mlp.fc2.bias", 0, d)
	}
	ones("norm.weight", d)
	rnd("norm.bias", 0, d)
	rnd("head.weight", 0.02, 1000, d)
	rnd("head.bias", 0, 1000)
	return w
}
