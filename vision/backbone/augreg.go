package backbone

import (
	"fmt"
	"slices"
	"strings"
)

// FromAugReg converts a Google augreg ViT checkpoint (.npz with
// "Transformer/encoderblock_i/..." names, dense kernels [in, out], conv
// kernels HWIO, attention kernels [D, heads, hd]) to timm's state-dict
// names and layouts, as timm's _load_weights does. Non-augreg weights are
// returned unchanged.
func FromAugReg(w *Weights) (*Weights, error) {
	if _, ok := w.Tensors["embedding/kernel"]; !ok {
		return w, nil
	}
	out := &Weights{Source: w.Source, Tensors: map[string]Tensor{}}
	// get returns a tensor whose length matches its shape (Get checks).
	get := func(name string) (Tensor, error) { return w.Get(name) }
	// transpose2 turns a [in, out] kernel into a torch [out, in] weight;
	// callers check len(t.Data) == in*outD.
	transpose2 := func(t Tensor, in, outD int64) Tensor {
		d := make([]float32, len(t.Data))
		for i := int64(0); i < in; i++ {
			for o := int64(0); o < outD; o++ {
				d[o*in+i] = t.Data[i*outD+o]
			}
		}
		return Tensor{Shape: []int64{outD, in}, Data: d}
	}
	set := func(name string, t Tensor) { out.Tensors[name] = t }
	emb, err := get("embedding/kernel")
	if err != nil {
		return nil, err
	}
	if len(emb.Shape) != 4 || slices.Contains(emb.Shape, 0) {
		return nil, fmt.Errorf("%s: embedding/kernel has shape %v, want [P, P, 3, D]", w.Source, emb.Shape)
	}
	kh, kw, ci, co := emb.Shape[0], emb.Shape[1], emb.Shape[2], emb.Shape[3]
	conv := make([]float32, len(emb.Data))
	for h := int64(0); h < kh; h++ {
		for x := int64(0); x < kw; x++ {
			for i := int64(0); i < ci; i++ {
				for o := int64(0); o < co; o++ {
					conv[((o*ci+i)*kh+h)*kw+x] = emb.Data[((h*kw+x)*ci+i)*co+o]
				}
			}
		}
	}
	set("patch_embed.proj.weight", Tensor{Shape: []int64{co, ci, kh, kw}, Data: conv})
	dim := co
	copyAs := func(dst, src string) error {
		t, err := get(src)
		if err != nil {
			return err
		}
		set(dst, t)
		return nil
	}
	for dst, src := range map[string]string{"patch_embed.proj.bias": "embedding/bias", "cls_token": "cls",
		"pos_embed": "Transformer/posembed_input/pos_embedding", "norm.weight": "Transformer/encoder_norm/scale",
		"norm.bias": "Transformer/encoder_norm/bias"} {
		if err := copyAs(dst, src); err != nil {
			return nil, err
		}
	}
	if _, ok := w.Tensors["head/kernel"]; ok {
		hk, err := get("head/kernel")
		if err != nil {
			return nil, err
		}
		if len(hk.Shape) != 2 {
			return nil, fmt.Errorf("%s: head/kernel has shape %v, want [D, classes]", w.Source, hk.Shape)
		}
		set("head.weight", transpose2(hk, hk.Shape[0], hk.Shape[1]))
		if err := copyAs("head.bias", "head/bias"); err != nil {
			return nil, err
		}
	}
	for i := 0; ; i++ {
		p := fmt.Sprintf("Transformer/encoderblock_%d/", i)
		if _, ok := w.Tensors[p+"LayerNorm_0/scale"]; !ok {
			break
		}
		t := fmt.Sprintf("blocks.%d.", i)
		for dst, src := range map[string]string{"norm1.weight": "LayerNorm_0/scale", "norm1.bias": "LayerNorm_0/bias",
			"norm2.weight": "LayerNorm_2/scale", "norm2.bias": "LayerNorm_2/bias",
			"mlp.fc1.bias": "MlpBlock_3/Dense_0/bias", "mlp.fc2.bias": "MlpBlock_3/Dense_1/bias",
			"attn.proj.bias": "MultiHeadDotProductAttention_1/out/bias"} {
			if err := copyAs(t+dst, p+src); err != nil {
				return nil, err
			}
		}
		for dst, src := range map[string]string{"mlp.fc1.weight": "MlpBlock_3/Dense_0/kernel", "mlp.fc2.weight": "MlpBlock_3/Dense_1/kernel"} {
			k, err := get(p + src)
			if err != nil {
				return nil, err
			}
			if len(k.Shape) != 2 {
				return nil, fmt.Errorf("%s: %s has shape %v, want 2 dimensions", w.Source, p+src, k.Shape)
			}
			set(t+dst, transpose2(k, k.Shape[0], k.Shape[1]))
		}
		// query/key/value kernels [D, H, hd] flatten to [D, D]; qkv = cat of their transposes
		var qkvW, qkvB []float32
		for _, n := range []string{"query", "key", "value"} {
			k, err := w.Get(p+"MultiHeadDotProductAttention_1/"+n+"/kernel", dim, -1, -1)
			if err != nil {
				return nil, err
			}
			b, err := get(p + "MultiHeadDotProductAttention_1/" + n + "/bias")
			if err != nil {
				return nil, err
			}
			qkvW = append(qkvW, transpose2(k, dim, int64(len(k.Data))/dim).Data...)
			qkvB = append(qkvB, b.Data...)
		}
		set(t+"attn.qkv.weight", Tensor{Shape: []int64{int64(len(qkvW)) / dim, dim}, Data: qkvW})
		set(t+"attn.qkv.bias", Tensor{Shape: []int64{int64(len(qkvB))}, Data: qkvB})
		// out kernel [H, hd, D] flattens to [D_in, D_out]
		ok, err := get(p + "MultiHeadDotProductAttention_1/out/kernel")
		if err != nil {
			return nil, err
		}
		if len(ok.Data) == 0 || int64(len(ok.Data))%dim != 0 {
			return nil, fmt.Errorf("%s: %s has shape %v, want [heads, head dim, %d]", w.Source, p+"MultiHeadDotProductAttention_1/out/kernel", ok.Shape, dim)
		}
		in := int64(len(ok.Data)) / dim
		set(t+"attn.proj.weight", transpose2(ok, in, dim))
	}
	for k := range out.Tensors {
		if strings.Contains(k, "/") {
			return nil, fmt.Errorf("%s: unconverted tensor %q", w.Source, k)
		}
	}
	return out, nil
}
