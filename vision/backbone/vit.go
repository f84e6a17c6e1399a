package backbone

import (
	"fmt"
	"math"

	"github.com/flycl/flycl/format/onnx"
	"github.com/flycl/flycl/vision/transform"
)

// ViT builds a timm VisionTransformer (class token, pre-norm blocks,
// LayerNorm eps 1e-6, exact erf GELU, qkv with bias) from a timm state
// dict, e.g. vit_base_patch16_224.augreg2_in21k_ft_in1k's safetensors:
// patch_embed.proj, cls_token, pos_embed, blocks.i.{norm1, attn.qkv,
// attn.proj, norm2, mlp.fc1, mlp.fc2}, norm, head. Width, depth, patch and
// image size are read from the tensors; heads must be given (12 for
// ViT-B/16). Outputs: the CLS token after the final LayerNorm, the head's
// logits when present, and the final LayerNorm of the mean CLS token over
// all blocks (F-OAL's feature). Options select the int8 graph (see
// Quantized): the linear layers of every block and the head become
// dynamically quantized matrix products; the patch embedding, attention
// products, LayerNorms and softmax stay float32.
func ViT(w *Weights, heads int, opts ...Option) (*Model, error) {
	pw, err := w.Get("patch_embed.proj.weight")
	if err != nil {
		return nil, err
	}
	if len(pw.Shape) != 4 || pw.Shape[1] != 3 || pw.Shape[2] != pw.Shape[3] {
		return nil, fmt.Errorf("%s: patch_embed.proj.weight has shape %v, want [D, 3, P, P]", w.Source, pw.Shape)
	}
	dim, patch := pw.Shape[0], pw.Shape[2]
	if heads <= 0 || dim%int64(heads) != 0 {
		return nil, fmt.Errorf("%s: width %d is not divisible by %d heads", w.Source, dim, heads)
	}
	pos, err := w.Get("pos_embed", 1, -1, dim)
	if err != nil {
		return nil, err
	}
	tokens := pos.Shape[1]
	side := int64(math.Round(math.Sqrt(float64(tokens - 1))))
	if side*side != tokens-1 {
		return nil, fmt.Errorf("%s: pos_embed has %d tokens, not 1 + a square", w.Source, tokens)
	}
	size := side * patch
	cls, err := w.Get("cls_token", 1, 1, dim)
	if err != nil {
		return nil, err
	}
	b := newBuilder("vit", w, opts, func(o ...Option) (*Model, error) { return ViT(w, heads, o...) })
	g := b.g
	x := g.Input("images", -1, 3, size, size)
	pb, err := w.Get("patch_embed.proj.bias", dim)
	if err != nil {
		return nil, err
	}
	y := g.Node("Conv", []string{x, g.Const("pw", pw.Shape, pw.Data), g.Const("pb", pb.Shape, pb.Data)},
		onnx.AInts("kernel_shape", patch, patch), onnx.AInts("strides", patch, patch))
	y = g.Node("Reshape", []string{y, g.ConstInt64("s", []int64{3}, []int64{0, dim, -1})})
	y = g.Node("Transpose", []string{y}, onnx.AInts("perm", 0, 2, 1)) // N×T×D
	// class token broadcast to the batch: Expand(cls, [N, 1, D])
	n := g.Node("Gather", []string{g.Node("Shape", []string{x}), g.ConstInt64("i", []int64{1}, []int64{0})}, onnx.AInt("axis", 0))
	shape := g.Node("Concat", []string{n, g.ConstInt64("s", []int64{2}, []int64{1, dim})}, onnx.AInt("axis", 0))
	c := g.Node("Expand", []string{g.Const("cls", cls.Shape, cls.Data), shape})
	y = g.Node("Concat", []string{c, y}, onnx.AInt("axis", 1))
	y = g.Node("Add", []string{y, g.Const("pos", pos.Shape, pos.Data)})

	ln := func(x, p string) (string, error) {
		s, err := w.Get(p+".weight", dim)
		if err != nil {
			return "", err
		}
		bb, err := w.Get(p+".bias", dim)
		if err != nil {
			return "", err
		}
		return g.Node("LayerNormalization", []string{x, g.Const("ln", s.Shape, s.Data), g.Const("lnb", bb.Shape, bb.Data)},
			onnx.AInt("axis", -1), onnx.AFloat("epsilon", 1e-6)), nil
	}
	// linear: x·Wᵀ + b for a torch Linear weight [out, in]
	linear := func(x, p string, in int64) (string, int64, error) {
		wt, err := w.Get(p+".weight", -1, in)
		if err != nil {
			return "", 0, err
		}
		out, in := wt.Shape[0], wt.Shape[1]
		tr := make([]float32, len(wt.Data))
		for o := int64(0); o < out; o++ {
			for i := int64(0); i < in; i++ {
				tr[i*out+o] = wt.Data[o*in+i]
			}
		}
		bt, err := w.Get(p+".bias", out)
		if err != nil {
			return "", 0, err
		}
		var y string
		if b.o.mode == modeInt8 {
			y = b.dynamicMatMul(x, in, out, tr)
		} else {
			y = g.Node("MatMul", []string{x, g.Const("W", []int64{in, out}, tr)})
		}
		return g.Node("Add", []string{y, g.Const("B", bt.Shape, bt.Data)}), out, nil
	}
	hd := dim / int64(heads)
	scale := g.Scalar(float32(1 / math.Sqrt(float64(hd))))
	var clsTokens []string
	depth := 0
	for ; ; depth++ {
		p := fmt.Sprintf("blocks.%d.", depth)
		if _, ok := w.Tensors[p+"attn.qkv.weight"]; !ok {
			break
		}
		h, err := ln(y, p+"norm1")
		if err != nil {
			return nil, err
		}
		qkv, _, err := linear(h, p+"attn.qkv", dim)
		if err != nil {
			return nil, err
		}
		qkv = g.Node("Reshape", []string{qkv, g.ConstInt64("s", []int64{5}, []int64{0, 0, 3, int64(heads), hd})})
		qkv = g.Node("Transpose", []string{qkv}, onnx.AInts("perm", 2, 0, 3, 1, 4)) // 3×N×H×T×hd
		parts := g.NodeN("Split", []string{qkv}, 3, onnx.AInt("axis", 0))
		ax := g.ConstInt64("ax", []int64{1}, []int64{0})
		q := g.Node("Squeeze", []string{parts[0], ax})
		k := g.Node("Squeeze", []string{parts[1], ax})
		v := g.Node("Squeeze", []string{parts[2], ax})
		att := g.Node("MatMul", []string{g.Node("Mul", []string{q, scale}), g.Node("Transpose", []string{k}, onnx.AInts("perm", 0, 1, 3, 2))})
		att = g.Node("Softmax", []string{att}, onnx.AInt("axis", -1))
		o := g.Node("MatMul", []string{att, v})                              // N×H×T×hd
		o = g.Node("Transpose", []string{o}, onnx.AInts("perm", 0, 2, 1, 3)) // N×T×H×hd
		o = g.Node("Reshape", []string{o, g.ConstInt64("s", []int64{3}, []int64{0, 0, dim})})
		if o, _, err = linear(o, p+"attn.proj", dim); err != nil {
			return nil, err
		}
		y = g.Node("Add", []string{y, o})
		if h, err = ln(y, p+"norm2"); err != nil {
			return nil, err
		}
		h, hidden, err := linear(h, p+"mlp.fc1", dim)
		if err != nil {
			return nil, err
		}
		// exact GELU: 0.5·x·(1 + erf(x/√2))
		e := g.Node("Erf", []string{g.Node("Mul", []string{h, g.Scalar(float32(1 / math.Sqrt2))})})
		h = g.Node("Mul", []string{g.Node("Mul", []string{h, g.Scalar(0.5)}), g.Node("Add", []string{e, g.Scalar(1)})})
		if h, _, err = linear(h, p+"mlp.fc2", hidden); err != nil {
			return nil, err
		}
		y = g.Node("Add", []string{y, h})
		clsTokens = append(clsTokens, g.Node("Gather", []string{y, g.ConstInt64("i", nil, []int64{0})}, onnx.AInt("axis", 1)))
	}
	if depth == 0 {
		return nil, fmt.Errorf("%s: no transformer blocks (blocks.0.attn.qkv.weight missing)", w.Source)
	}
	y, err = ln(y, "norm")
	if err != nil {
		return nil, err
	}
	feat := g.Node("Gather", []string{y, g.ConstInt64("i", nil, []int64{0})}, onnx.AInt("axis", 1)) // N×D
	outs, names, dims := []string{feat}, []string{"features"}, []int{int(dim)}
	if _, ok := w.Tensors["head.weight"]; ok {
		logits, nc, err := linear(feat, "head", dim)
		if err != nil {
			return nil, err
		}
		outs, names, dims = append(outs, logits), append(names, "logits"), append(dims, int(nc))
	}
	// mean CLS over blocks, then the final LayerNorm
	sum := clsTokens[0]
	for _, t := range clsTokens[1:] {
		sum = g.Node("Add", []string{sum, t})
	}
	mean, err := ln(g.Node("Mul", []string{sum, g.Scalar(1 / float32(depth))}), "norm")
	if err != nil {
		return nil, err
	}
	outs, names, dims = append(outs, mean), append(names, "blocks"), append(dims, int(dim))
	preset := transform.Presets["timm-vit"]
	if size != 224 {
		preset = transform.Preset{Name: fmt.Sprintf("vit-%d", size), Resize: int(size), Filter: transform.Bicubic, Crop: int(size), Mean: preset.Mean, Std: preset.Std}
	}
	return b.finish("vit", outs, names, dims, int(size), preset)
}
