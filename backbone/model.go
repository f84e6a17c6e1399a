package backbone

import (
	"fmt"

	"github.com/flycl/flycl/onnx"
	"github.com/flycl/flycl/transform"
)

// Model is a backbone as an ONNX graph: input "images" (N×3×Size×Size,
// preprocessed by Preset) and outputs (N×Dims[i]), the first being the
// feature Fly-CL learns from.
type Model struct {
	Name    string
	ONNX    []byte
	Input   string
	Outputs []string
	Dims    []int
	Size    int
	Preset  transform.Preset
	Hash    string // identifies the weights (for caches)
}

// Dim returns the feature dimension.
func (m *Model) Dim() int { return m.Dims[0] }

// OutputIndex returns the position of the named output.
func (m *Model) OutputIndex(name string) (int, error) {
	for i, o := range m.Outputs {
		if o == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%s has no output %q (has %v)", m.Name, name, m.Outputs)
}

// opset used by the builders (LayerNormalization needs 17).
const opset = 17

// convBlock adds a Conv (+ optional activation) from tensors prefix+"weight"
// and prefix+"bias" (bias optional). It returns the output and its channels.
type builder struct {
	g *onnx.Graph
	w *Weights
}

func (b *builder) conv(x, wname, bname string, stride, pad int64) (string, int64, error) {
	wt, err := b.w.Get(wname)
	if err != nil {
		return "", 0, err
	}
	if len(wt.Shape) != 4 {
		return "", 0, fmt.Errorf("%s: tensor %q has shape %v, want [out, in/groups, kh, kw]", b.w.Source, wname, wt.Shape)
	}
	inputs := []string{x, b.g.Const("w", wt.Shape, wt.Data)}
	if bname != "" {
		bt, err := b.w.Get(bname, wt.Shape[0])
		if err != nil {
			return "", 0, err
		}
		inputs = append(inputs, b.g.Const("b", bt.Shape, bt.Data))
	}
	return b.g.Node("Conv", inputs,
		onnx.AInts("kernel_shape", wt.Shape[2], wt.Shape[3]),
		onnx.AInts("strides", stride, stride),
		onnx.AInts("pads", pad, pad, pad, pad)), wt.Shape[0], nil
}

func (b *builder) convGroups(x, wname, bname string, stride, pad, inCh int64) (string, int64, error) {
	wt, err := b.w.Get(wname)
	if err != nil {
		return "", 0, err
	}
	if len(wt.Shape) != 4 || wt.Shape[1] == 0 || inCh%wt.Shape[1] != 0 {
		return "", 0, fmt.Errorf("%s: tensor %q has shape %v, incompatible with %d input channels", b.w.Source, wname, wt.Shape, inCh)
	}
	groups := inCh / wt.Shape[1]
	bt, err := b.w.Get(bname, wt.Shape[0])
	if err != nil {
		return "", 0, err
	}
	return b.g.Node("Conv", []string{x, b.g.Const("w", wt.Shape, wt.Data), b.g.Const("b", bt.Shape, bt.Data)},
		onnx.AInts("kernel_shape", wt.Shape[2], wt.Shape[3]),
		onnx.AInts("strides", stride, stride),
		onnx.AInts("pads", pad, pad, pad, pad),
		onnx.AInt("group", groups)), wt.Shape[0], nil
}

func (b *builder) relu(x string) string { return b.g.Node("Relu", []string{x}) }

func (b *builder) relu6(x string) string {
	return b.g.Node("Clip", []string{x, b.g.Scalar(0), b.g.Scalar(6)})
}

// pooled is GlobalAveragePool then Flatten: N×C.
func (b *builder) pooled(x string) string {
	return b.g.Node("Flatten", []string{b.g.Node("GlobalAveragePool", []string{x})}, onnx.AInt("axis", 1))
}

// finish names the outputs (the first is always "features") and
// serialises the graph.
func finish(name string, g *onnx.Graph, outs, names []string, dims []int, size int, preset transform.Preset, w *Weights) *Model {
	m := &Model{Name: name, Input: "images", Size: size, Preset: preset, Dims: dims, Hash: hashWeights(w)}
	for i, o := range outs {
		n := g.Named(names[i], o)
		g.Output(n, -1, int64(dims[i]))
		m.Outputs = append(m.Outputs, n)
	}
	m.ONNX = g.Model(opset)
	return m
}
