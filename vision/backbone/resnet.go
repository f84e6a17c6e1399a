package backbone

import (
	"fmt"
	"math"

	"github.com/flycl/flycl/format/onnx"
	"github.com/flycl/flycl/vision/transform"
)

// convBN adds a convolution whose batch normalisation (eval mode, eps
// 1e-5) is folded into its weights and bias in float64.
func (b *builder) convBN(x, conv, bn string, stride, pad int64) (string, int64, error) {
	wt, err := b.w.Get(conv + ".weight")
	if err != nil {
		return "", 0, err
	}
	if len(wt.Shape) != 4 {
		return "", 0, fmt.Errorf("%s: tensor %q has shape %v, want 4 dimensions", b.w.Source, conv+".weight", wt.Shape)
	}
	out := wt.Shape[0]
	var p [4]Tensor
	for i, s := range []string{"weight", "bias", "running_mean", "running_var"} {
		if p[i], err = b.w.Get(bn+"."+s, out); err != nil {
			return "", 0, err
		}
	}
	per := int(numel(wt.Shape) / out)
	w := make([]float32, len(wt.Data))
	bias := make([]float32, out)
	for o := 0; o < int(out); o++ {
		scale := float64(p[0].Data[o]) / math.Sqrt(float64(p[3].Data[o])+1e-5)
		for i := 0; i < per; i++ {
			w[o*per+i] = float32(float64(wt.Data[o*per+i]) * scale)
		}
		bias[o] = float32(float64(p[1].Data[o]) - float64(p[2].Data[o])*scale)
	}
	return b.convNode(x, wt.Shape, w, bias,
		onnx.AInts("kernel_shape", wt.Shape[2], wt.Shape[3]),
		onnx.AInts("strides", stride, stride),
		onnx.AInts("pads", pad, pad, pad, pad)), out, nil
}

// ResNet50 builds a torchvision-style ResNet with bottleneck blocks from
// a state dict: torchvision's resnet50-11ad3fa6.pth (IMAGENET1K_V2) or
// timm's resnet50 safetensors use the same names (conv1, bn1,
// layerL.B.{conv1,bn1,conv2,bn2,conv3,bn3,downsample.0,downsample.1}, fc).
// Depth and widths are read from the tensors, so smaller variants work
// too. Outputs: the pooled feature (2048-d for ResNet-50) and, when fc is
// present, the logits. The input size is 224. Options select the int8
// graph (see Quantized): every convolution's output (after ReLU) and every
// residual sum are quantized activations; fc stays float32.
func ResNet50(w *Weights, opts ...Option) (*Model, error) {
	b := newBuilder("resnet50", w, opts, func(o ...Option) (*Model, error) { return ResNet50(w, o...) })
	g := b.g
	x := b.act(g.Input("images", -1, 3, 224, 224))
	y, _, err := b.convBN(x, "conv1", "bn1", 2, 3)
	if err != nil {
		return nil, err
	}
	y = b.act(b.relu(y))
	y = b.actLike(g.Node("MaxPool", []string{y}, onnx.AInts("kernel_shape", 3, 3), onnx.AInts("strides", 2, 2), onnx.AInts("pads", 1, 1, 1, 1)), y)
	var ch int64
	for layer := 1; layer <= 4; layer++ {
		for blk := 0; ; blk++ {
			p := fmt.Sprintf("layer%d.%d.", layer, blk)
			if _, ok := w.Tensors[p+"conv1.weight"]; !ok {
				if blk == 0 {
					return nil, fmt.Errorf("%s: no tensors for %s (not a ResNet state dict?)", w.Source, p)
				}
				break
			}
			stride := int64(1)
			if layer > 1 && blk == 0 {
				stride = 2
			}
			h, _, err := b.convBN(y, p+"conv1", p+"bn1", 1, 0)
			if err != nil {
				return nil, err
			}
			if h, _, err = b.convBN(b.act(b.relu(h)), p+"conv2", p+"bn2", stride, 1); err != nil {
				return nil, err
			}
			if h, ch, err = b.convBN(b.act(b.relu(h)), p+"conv3", p+"bn3", 1, 0); err != nil {
				return nil, err
			}
			h = b.act(h)
			short := y
			if _, ok := w.Tensors[p+"downsample.0.weight"]; ok {
				if short, _, err = b.convBN(y, p+"downsample.0", p+"downsample.1", stride, 0); err != nil {
					return nil, err
				}
				short = b.act(short)
			}
			y = b.act(b.relu(g.Node("Add", []string{h, short})))
		}
	}
	feat := b.pooled(y)
	outs, names, dims := []string{feat}, []string{"features"}, []int{int(ch)}
	if fw, err := w.Get("fc.weight", -1, ch); err == nil {
		fb, err := w.Get("fc.bias", fw.Shape[0])
		if err != nil {
			return nil, err
		}
		logits := g.Node("Gemm", []string{feat, g.Const("fc", fw.Shape, fw.Data), g.Const("fcb", fb.Shape, fb.Data)}, onnx.AInt("transB", 1))
		outs, names, dims = append(outs, logits), append(names, "logits"), append(dims, int(fw.Shape[0]))
	}
	return b.finish("resnet50", outs, names, dims, 224, transform.Presets["tv-resnet50-v2"])
}
