package backbone

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"slices"

	"github.com/flycl/flycl/format/onnx"
	"github.com/flycl/flycl/vision/transform"
)

// hashWeights fingerprints a checkpoint (names, shapes and values).
func hashWeights(w *Weights) string {
	h := sha256.New()
	names := make([]string, 0, len(w.Tensors))
	for n := range w.Tensors {
		names = append(names, n)
	}
	slices.Sort(names)
	var b [8]byte
	for _, n := range names {
		t := w.Tensors[n]
		h.Write([]byte(n))
		for _, d := range t.Shape {
			binary.LittleEndian.PutUint64(b[:], uint64(d))
			h.Write(b[:])
		}
		buf := make([]byte, 4*len(t.Data))
		for i, v := range t.Data {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
		}
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// SqueezeNet builds SqueezeNet 1.1 from the per-layer .npy weights of a
// squeezenet1.1 folder (squeezenet0_convN_weight/bias, batch
// normalisation absent). Outputs: the 512-d global-average-pooled feature
// and the 1000 ImageNet logits. Options select the int8 graph (see
// Quantized): every convolution's input and every Concat's output are
// quantized activations.
func SqueezeNet(w *Weights, opts ...Option) (*Model, error) {
	b := newBuilder("squeezenet1.1", w, opts, func(o ...Option) (*Model, error) { return SqueezeNet(w, o...) })
	g := b.g
	x := b.act(g.Input("images", -1, 3, 224, 224))
	conv := func(x string, i int, pad int64) (string, error) {
		y, _, err := b.conv(x, fmt.Sprintf("squeezenet0_conv%d_weight", i), fmt.Sprintf("squeezenet0_conv%d_bias", i), 1, pad)
		return b.act(b.relu(y)), err
	}
	var err error
	y, _, err := b.conv(x, "squeezenet0_conv0_weight", "squeezenet0_conv0_bias", 2, 0)
	if err != nil {
		return nil, err
	}
	y = b.act(b.relu(y))
	pool := func(x string) string {
		return b.actLike(g.Node("MaxPool", []string{x}, onnx.AInts("kernel_shape", 3, 3), onnx.AInts("strides", 2, 2), onnx.AInt("ceil_mode", 1)), x)
	}
	fire := func(x string, first int) (string, error) {
		s, err := conv(x, first, 0)
		if err != nil {
			return "", err
		}
		e1, err := conv(s, first+1, 0)
		if err != nil {
			return "", err
		}
		e3, err := conv(s, first+2, 1)
		if err != nil {
			return "", err
		}
		return b.act(g.Node("Concat", []string{e1, e3}, onnx.AInt("axis", 1))), nil
	}
	y = pool(y)
	for _, f := range []int{1, 4, -1, 7, 10, -1, 13, 16, 19, 22} {
		if f < 0 {
			y = pool(y)
			continue
		}
		if y, err = fire(y, f); err != nil {
			return nil, err
		}
	}
	feat := b.pooled(y)
	logits, err := conv(y, 25, 0)
	if err != nil {
		return nil, err
	}
	return b.finish("squeezenet1.1", []string{feat, b.pooled(logits)}, []string{"features", "logits"}, []int{512, 1000}, 224, transform.Presets["imagenet"])
}

// MobileNetV2 builds MobileNetV2 1.0 from the per-layer .npy weights of
// a mobilenetv2-1.0 folder (conv_N_weight/bias with batch
// normalisation folded in). Output: the 1280-d pooled feature. Options
// select the int8 graph (see Quantized): every convolution's output (after
// ReLU6) and every residual sum are quantized activations.
func MobileNetV2(w *Weights, opts ...Option) (*Model, error) {
	b := newBuilder("mobilenetv2-1.0", w, opts, func(o ...Option) (*Model, error) { return MobileNetV2(w, o...) })
	g := b.g
	x := b.act(g.Input("images", -1, 3, 224, 224))
	name := func(i int) (string, string) { return fmt.Sprintf("conv_%d_weight", i), fmt.Sprintf("conv_%d_bias", i) }
	layer := func(x string, i int, stride int64, inCh int64, act bool) (string, int64, error) {
		wn, bn := name(i)
		wt, err := w.Get(wn)
		if err != nil {
			return "", 0, err
		}
		pad := (wt.Shape[len(wt.Shape)-1] - 1) / 2
		y, ch, err := b.convGroups(x, wn, bn, stride, pad, inCh)
		if err != nil {
			return "", 0, err
		}
		if act {
			y = b.relu6(y)
		}
		return b.act(y), ch, nil
	}
	y, ch, err := layer(x, 0, 2, 3, true)
	if err != nil {
		return nil, err
	}
	if y, ch, err = layer(y, 2, 1, ch, true); err != nil {
		return nil, err
	}
	if y, ch, err = layer(y, 4, 1, ch, false); err != nil {
		return nil, err
	}
	blocks := []struct {
		first  int
		stride int64
	}{{5, 2}, {10, 1}, {16, 2}, {21, 1}, {27, 1}, {33, 2}, {38, 1}, {44, 1}, {50, 1}, {56, 1}, {61, 1}, {67, 1}, {73, 2}, {78, 1}, {84, 1}, {90, 1}}
	for _, blk := range blocks {
		a, b2, c := blk.first, blk.first+2, blk.first+4
		if blk.first == 5 {
			b2, c = 7, 9
		}
		in, inCh := y, ch
		h, hc, err := layer(in, a, 1, inCh, true)
		if err != nil {
			return nil, err
		}
		if h, hc, err = layer(h, b2, blk.stride, hc, true); err != nil {
			return nil, err
		}
		out, oc, err := layer(h, c, 1, hc, false)
		if err != nil {
			return nil, err
		}
		if blk.stride == 1 && oc == inCh {
			out = b.act(g.Node("Add", []string{in, out}))
		}
		y, ch = out, oc
	}
	if y, ch, err = layer(y, 95, 1, ch, true); err != nil {
		return nil, err
	}
	if ch != 1280 {
		return nil, fmt.Errorf("%s: last layer has %d channels, want 1280", w.Source, ch)
	}
	return b.finish("mobilenetv2-1.0", []string{b.pooled(y)}, []string{"features"}, []int{1280}, 224, transform.Presets["imagenet"])
}
