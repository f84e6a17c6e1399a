package backbone

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/flycl/flycl/format/onnx"
	"github.com/flycl/flycl/vision/transform"
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
	// Hash identifies the graph's arithmetic for caches and model files:
	// the weights, and for int8 graphs the precision and calibration.
	Hash string
	// Precision is the graph's arithmetic (FP32 unless built with
	// Quantized); Calibration fingerprints the activation ranges of a
	// static int8 graph ("" otherwise).
	Precision   Precision
	Calibration string
	// Calib is the calibration a static int8 graph was built with (nil
	// otherwise); save it to rebuild the same graph with Quantize.
	Calib *Calibration

	calibPoints int     // calibration graph: number of observed activations
	rebuild     Builder // the builder with the same weights (nil: loaded from a file)
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
	o buildOptions

	points []string          // calibration graph: observed activations
	next   int               // int8 graph: next calibrated range
	qp     map[string]qparam // int8 graph: quantized activations
	err    error             // first quantization error
	// rebuild is the public builder over the same weights
	rebuild Builder
}

func newBuilder(name string, w *Weights, opts []Option, rebuild Builder) *builder {
	b := &builder{g: onnx.NewGraph(name), w: w, rebuild: rebuild}
	for _, o := range opts {
		o(&b.o)
	}
	return b
}

func (b *builder) conv(x, wname, bname string, stride, pad int64) (string, int64, error) {
	wt, err := b.w.Get(wname)
	if err != nil {
		return "", 0, err
	}
	if len(wt.Shape) != 4 {
		return "", 0, fmt.Errorf("%s: tensor %q has shape %v, want [out, in/groups, kh, kw]", b.w.Source, wname, wt.Shape)
	}
	var bias []float32
	if bname != "" {
		bt, err := b.w.Get(bname, wt.Shape[0])
		if err != nil {
			return "", 0, err
		}
		bias = bt.Data
	}
	return b.convNode(x, wt.Shape, wt.Data, bias,
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
	return b.convNode(x, wt.Shape, wt.Data, bt.Data,
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
// serialises the graph. The int8 graph's name gains "-int8" and its Hash
// covers the precision and calibration, so caches and model files never
// mix it with the float graph.
func (b *builder) finish(name string, outs, names []string, dims []int, size int, preset transform.Preset) (*Model, error) {
	if b.err != nil {
		return nil, fmt.Errorf("%s: %w", name, b.err)
	}
	g := b.g
	m := &Model{Name: name, Input: "images", Size: size, Preset: preset, Dims: dims, Hash: hashWeights(b.w), Precision: FP32, rebuild: b.rebuild}
	if b.o.mode == modeInt8 {
		if b.o.cal != nil && b.next != len(b.o.cal.Ranges) {
			return nil, fmt.Errorf("%s: calibration has %d ranges, the graph uses %d", name, len(b.o.cal.Ranges), b.next)
		}
		m.Name, m.Precision = name+"-int8", INT8
		id := m.Hash + "|int8|dynamic"
		if b.o.cal != nil && len(b.o.cal.Ranges) > 0 {
			m.Calibration, m.Calib = b.o.cal.Hash(), b.o.cal
			id = m.Hash + "|int8|" + m.Calibration
		}
		h := sha256.Sum256([]byte(id))
		m.Hash = hex.EncodeToString(h[:])[:16]
	}
	for i, o := range outs {
		n := g.Named(names[i], o)
		g.Output(n, -1, int64(dims[i]))
		m.Outputs = append(m.Outputs, n)
	}
	if b.o.mode == modeCalibrate && len(b.points) > 0 {
		b.calibrationOutputs()
		m.calibPoints = len(b.points)
	}
	m.ONNX = g.Model(opset)
	return m, nil
}
