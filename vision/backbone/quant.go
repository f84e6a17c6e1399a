package backbone

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"

	"github.com/flycl/flycl/format/onnx"
)

// Precision is the arithmetic a backbone graph runs in.
type Precision string

// The precisions the builders support.
const (
	// FP32 is the checkpoint's float32 arithmetic.
	FP32 Precision = "fp32"
	// INT8 quantizes weights to int8 per output channel (symmetric) and
	// activations to uint8: statically, with ranges from a calibration
	// pass (QuantizeLinear/DequantizeLinear around every convolution,
	// which ONNX Runtime fuses into QLinearConv), for the CNNs; and
	// dynamically, per batch (DynamicQuantizeLinear + MatMulInteger,
	// fused into DynamicQuantizeMatMul), for ViT's linear layers.
	INT8 Precision = "int8"
)

// Precisions lists the accepted precision names.
var Precisions = []Precision{FP32, INT8}

// ParsePrecision checks a precision name ("" means fp32).
func ParsePrecision(s string) (Precision, error) {
	switch Precision(s) {
	case "", FP32:
		return FP32, nil
	case INT8:
		return INT8, nil
	}
	return "", fmt.Errorf("unknown precision %q (want fp32 or int8)", s)
}

// Range is the observed range of one activation tensor.
type Range struct{ Min, Max float32 }

// Calibration holds the activation ranges of a static int8 graph, one per
// quantization point in the order the builder creates them, measured on
// Images calibration images.
type Calibration struct {
	Ranges []Range
	Images int
	// Method is how the ranges were chosen (informational: the ranges
	// alone define the graph and its Hash; "" when read from a file).
	Method CalibMethod
}

// Hash fingerprints the calibration (for model identity and caches).
func (c *Calibration) Hash() string {
	h := sha256.New()
	var b [8]byte
	for _, r := range c.Ranges {
		binary.LittleEndian.PutUint32(b[:4], math.Float32bits(r.Min))
		binary.LittleEndian.PutUint32(b[4:], math.Float32bits(r.Max))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

type qmode int

const (
	modeFloat qmode = iota
	modeCalibrate
	modeInt8
)

// Option changes what a graph builder (SqueezeNet, MobileNetV2,
// ResNet50, ViT) produces.
type Option func(*buildOptions)

type buildOptions struct {
	mode    qmode
	cal     *Calibration
	tensors bool // calibration graph: output every observed activation, flattened
}

// Quantized makes a builder produce the int8 graph. The CNNs need the
// Calibration returned by Calibrate for the same builder; ViT quantizes
// its activations dynamically and accepts nil.
func Quantized(c *Calibration) Option {
	return func(o *buildOptions) { o.mode, o.cal = modeInt8, c }
}

// calibrating makes a builder produce the calibration graph: the float
// graph with outputs "calib_min" and "calib_max" holding the range of
// every activation that the int8 graph quantizes.
func calibrating() Option { return func(o *buildOptions) { o.mode = modeCalibrate } }

// calibratingTensors makes a builder produce the calibration graph whose
// outputs "calib_t<i>" are the observed activations themselves, flattened
// (for the histogram methods).
func calibratingTensors() Option {
	return func(o *buildOptions) { o.mode, o.tensors = modeCalibrate, true }
}

// Builder builds one backbone (a closure over its weights) with options.
type Builder func(opts ...Option) (*Model, error)

// qparam is the quantization of one activation tensor: uint8 with scale
// and zero point.
type qparam struct {
	scale float32
	zp    uint8
}

// activationParams maps a range to uint8 parameters. The range is widened
// to include 0 so that zero (padding, ReLU's floor) is exact.
func activationParams(r Range) qparam {
	lo, hi := math.Min(0, float64(r.Min)), math.Max(0, float64(r.Max))
	if hi-lo < 1e-12 {
		hi = lo + 1e-12
	}
	scale := (hi - lo) / 255
	zp := math.Round(-lo / scale)
	zp = math.Max(0, math.Min(255, zp))
	return qparam{scale: float32(scale), zp: uint8(zp)}
}

// quantizeRows quantizes rows×cols values (row-major, one scale per row)
// symmetrically to int8 in [-127, 127]; an all-zero row gets scale 1.
func quantizeRows(data []float32, rows int) ([]int8, []float32) {
	cols := len(data) / rows
	q := make([]int8, len(data))
	scales := make([]float32, rows)
	for r := 0; r < rows; r++ {
		row := data[r*cols : (r+1)*cols]
		var m float64
		for _, v := range row {
			m = math.Max(m, math.Abs(float64(v)))
		}
		s := float32(m / 127)
		if m == 0 {
			s = 1
		}
		scales[r] = s
		for i, v := range row {
			x := math.Round(float64(v) / float64(s))
			q[r*cols+i] = int8(math.Max(-127, math.Min(127, x)))
		}
	}
	return q, scales
}

// act marks x as an activation the int8 graph quantizes: in the float
// graph it returns x, in the calibration graph it records x, in the int8
// graph it returns DequantizeLinear(QuantizeLinear(x)) with the next
// calibrated range.
func (b *builder) act(x string) string {
	switch b.o.mode {
	case modeCalibrate:
		b.points = append(b.points, x)
	case modeInt8:
		if b.o.cal == nil {
			return x
		}
		if b.next >= len(b.o.cal.Ranges) {
			b.err = fmt.Errorf("calibration has %d ranges, the graph needs more", len(b.o.cal.Ranges))
			return x
		}
		p := activationParams(b.o.cal.Ranges[b.next])
		b.next++
		return b.qdq(x, p)
	}
	return x
}

// actLike quantizes x with the parameters of src (an earlier act), for
// operators that keep the range (max pooling), so ONNX Runtime can run
// them on uint8 directly.
func (b *builder) actLike(x, src string) string {
	if p, ok := b.qp[src]; ok && b.o.mode == modeInt8 {
		return b.qdq(x, p)
	}
	return x
}

func (b *builder) qdq(x string, p qparam) string {
	s, z := b.g.Scalar(p.scale), b.g.ConstUint8("zp", nil, []uint8{p.zp})
	y := b.g.Node("DequantizeLinear", []string{b.g.Node("QuantizeLinear", []string{x, s, z}), s, z})
	if b.qp == nil {
		b.qp = map[string]qparam{}
	}
	b.qp[y] = p
	return y
}

// convNode adds a Conv of x with weight w (shape [out, in/groups, kh, kw])
// and optional bias. When x is a quantized activation of the int8 graph
// the weight is int8 per output channel and the bias int32 with scale
// x_scale·w_scale, both behind DequantizeLinear, which is the QDQ form
// ONNX Runtime fuses into QLinearConv.
func (b *builder) convNode(x string, shape []int64, w, bias []float32, attrs ...onnx.Attr) string {
	g := b.g
	p, quant := b.qp[x]
	if b.o.mode != modeInt8 || !quant {
		in := []string{x, g.Const("w", shape, w)}
		if bias != nil {
			in = append(in, g.Const("b", []int64{shape[0]}, bias))
		}
		return g.Node("Conv", in, attrs...)
	}
	out := int(shape[0])
	q, scales := quantizeRows(w, out)
	ws := g.Const("ws", []int64{shape[0]}, scales)
	wz := g.ConstInt8("wz", []int64{shape[0]}, make([]int8, out))
	in := []string{x, g.Node("DequantizeLinear", []string{g.ConstInt8("wq", shape, q), ws, wz}, onnx.AInt("axis", 0))}
	if bias != nil {
		bq := make([]int32, out)
		bs := make([]float32, out)
		for o := range bq {
			bs[o] = p.scale * scales[o]
			v := math.Round(float64(bias[o]) / float64(bs[o]))
			bq[o] = int32(math.Max(math.MinInt32, math.Min(math.MaxInt32, v)))
		}
		in = append(in, g.Node("DequantizeLinear", []string{g.ConstInt32("bq", []int64{shape[0]}, bq),
			g.Const("bs", []int64{shape[0]}, bs), g.ConstInt32("bz", []int64{shape[0]}, make([]int32, out))}, onnx.AInt("axis", 0)))
	}
	return g.Node("Conv", in, attrs...)
}

// dynamicMatMul computes x·W (W: in×out row-major) with W int8 per output
// column and x quantized per call by DynamicQuantizeLinear: the
// DynamicQuantizeLinear → MatMulInteger → Cast → Mul(a_scale·b_scale)
// pattern that ONNX Runtime fuses into DynamicQuantizeMatMul.
func (b *builder) dynamicMatMul(x string, in, out int64, w []float32) string {
	g := b.g
	// quantize columns: transpose to out×in rows, quantize, transpose back
	tr := make([]float32, len(w))
	for i := int64(0); i < in; i++ {
		for o := int64(0); o < out; o++ {
			tr[o*in+i] = w[i*out+o]
		}
	}
	qt, scales := quantizeRows(tr, int(out))
	q := make([]int8, len(w))
	for o := int64(0); o < out; o++ {
		for i := int64(0); i < in; i++ {
			q[i*out+o] = qt[o*in+i]
		}
	}
	d := g.NodeN("DynamicQuantizeLinear", []string{x}, 3)
	mm := g.Node("MatMulInteger", []string{d[0], g.ConstInt8("wq", []int64{in, out}, q), d[2], g.ConstInt8("wz", nil, []int8{0})})
	mult := g.Node("Mul", []string{d[1], g.Const("ws", []int64{out}, scales)})
	return g.Node("Mul", []string{g.Node("Cast", []string{mm}, onnx.AInt("to", onnx.Float)), mult})
}

// calibrationOutputs adds the calib_min and calib_max outputs (one value
// per recorded point) to the calibration graph.
func (b *builder) calibrationOutputs() {
	g := b.g
	if b.o.tensors {
		flat := g.ConstInt64("s", []int64{1}, []int64{-1})
		for i, p := range b.points {
			g.Output(g.Named(fmt.Sprintf("calib_t%d", i), g.Node("Reshape", []string{p, flat})), -1)
		}
		return
	}
	one := g.ConstInt64("s", []int64{1}, []int64{1})
	var mins, maxs []string
	for _, p := range b.points {
		mins = append(mins, g.Node("Reshape", []string{g.Node("ReduceMin", []string{p}, onnx.AInt("keepdims", 0)), one}))
		maxs = append(maxs, g.Node("Reshape", []string{g.Node("ReduceMax", []string{p}, onnx.AInt("keepdims", 0)), one}))
	}
	n := int64(len(b.points))
	for i, v := range [][]string{mins, maxs} {
		name := []string{"calib_min", "calib_max"}[i]
		y := v[0]
		if len(v) > 1 {
			y = g.Node("Concat", v, onnx.AInt("axis", 0))
		}
		g.Output(g.Named(name, y), n)
	}
}

// Calibrate measures the activation ranges of build's int8 graph: it runs
// the calibration graph over n preprocessed images x (n×3×S×S) in batches
// of batch and keeps each activation's minimum and maximum (ONNX
// Runtime's MinMax calibration). For the histogram methods (percentile,
// mse) a second pass counts every activation value in a 2048-bin
// histogram over that range and method picks the range from it. A
// builder without static quantization points (ViT) returns an empty
// calibration without running anything.
func Calibrate(ctx context.Context, build Builder, method CalibMethod, x []float32, n, batch, threads int) (*Calibration, error) {
	method, err := ParseCalibMethod(string(method))
	if err != nil {
		return nil, err
	}
	m, err := build(calibrating())
	if err != nil {
		return nil, err
	}
	if m.calibPoints == 0 {
		return &Calibration{Images: 0, Method: method}, nil
	}
	per := 3 * m.Size * m.Size
	if n <= 0 || len(x) != n*per {
		return nil, fmt.Errorf("%s: calibration input has %d values, want n×3×%d×%d with n=%d", m.Name, len(x), m.Size, m.Size, n)
	}
	if batch <= 0 {
		batch = 8
	}
	if err := Init(""); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoRuntime, err)
	}
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	P := m.calibPoints
	c := &Calibration{Ranges: make([]Range, P), Images: n, Method: method}
	for i := range c.Ranges {
		c.Ranges[i] = Range{Min: float32(math.Inf(1)), Max: float32(math.Inf(-1))}
	}
	lo, hi := make([]float32, P), make([]float32, P)
	err = calibrationPass(ctx, m, threads, []string{"calib_min", "calib_max"}, x, n, batch, func(out [][]float32) error {
		if len(out[0]) != P || len(out[1]) != P {
			return fmt.Errorf("%s: calibration ranges have %d and %d values, want %d", m.Name, len(out[0]), len(out[1]), P)
		}
		copy(lo, out[0])
		copy(hi, out[1])
		for i := range c.Ranges {
			c.Ranges[i].Min = min(c.Ranges[i].Min, lo[i])
			c.Ranges[i].Max = max(c.Ranges[i].Max, hi[i])
		}
		return nil
	})
	if err != nil || method == CalibMinMax {
		return c, err
	}
	// second pass: histograms over the observed ranges
	mt, err := build(calibratingTensors())
	if err != nil {
		return nil, err
	}
	hist := make([]*histogram, P)
	names := make([]string, P)
	for i := range hist {
		hist[i] = newHistogram(c.Ranges[i], calibBins)
		names[i] = fmt.Sprintf("calib_t%d", i)
	}
	err = calibrationPass(ctx, mt, threads, names, x, n, min(batch, 4), func(out [][]float32) error {
		for i, v := range out {
			hist[i].add(v)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i, h := range hist {
		if method == CalibMSE {
			c.Ranges[i] = h.mseRange()
		} else {
			c.Ranges[i] = h.percentileRange(method.percentile())
		}
	}
	return c, nil
}

// calibrationPass runs the calibration graph m over the n images x in
// batches, fetching the named outputs (allocated by ONNX Runtime) and
// handing them to use.
func calibrationPass(ctx context.Context, m *Model, threads int, outputs []string, x []float32, n, batch int, use func([][]float32) error) error {
	e, err := newEngine(m.ONNX, m.Input, outputs, threads, false)
	if err != nil {
		return fmt.Errorf("%s: calibration session: %w", m.Name, err)
	}
	defer e.close()
	per := 3 * m.Size * m.Size
	for b := 0; b < n; b += batch {
		if err := ctx.Err(); err != nil {
			return err
		}
		k := min(batch, n-b)
		if err := e.run(x[b*per:(b+k)*per], k, m.Size, nil, nil, use); err != nil {
			return fmt.Errorf("%s: calibration run: %w", m.Name, err)
		}
	}
	return nil
}

// Int8 returns m's int8 graph, calibrated by method on the n preprocessed
// images x (n×3×S×S; ignored by ViT's dynamic quantization). Use images
// of the training data: the calibration is part of the graph's identity
// (Hash).
func (m *Model) Int8(ctx context.Context, method CalibMethod, x []float32, n, threads int) (*Model, error) {
	if m.Precision == INT8 {
		return m, nil
	}
	if m.rebuild == nil {
		return nil, fmt.Errorf("%s: int8 needs a graph built by flycl (not a loaded .onnx file)", m.Name)
	}
	return Int8(ctx, m.rebuild, method, x, n, threads)
}

// Quantize rebuilds m's int8 graph from a saved calibration (Model.Calib
// of an earlier Int8; nil for ViT), bit for bit the same graph.
func (m *Model) Quantize(c *Calibration) (*Model, error) {
	if m.rebuild == nil {
		return nil, fmt.Errorf("%s: int8 needs a graph built by flycl (not a loaded .onnx file)", m.Name)
	}
	return m.rebuild(Quantized(c))
}

// Int8 calibrates build by method on the n images x (see Calibrate) and
// returns its int8 graph.
func Int8(ctx context.Context, build Builder, method CalibMethod, x []float32, n, threads int) (*Model, error) {
	c, err := Calibrate(ctx, build, method, x, n, 8, threads)
	if err != nil {
		return nil, err
	}
	return build(Quantized(c))
}

// Text returns the ranges as text: "min max" pairs separated by spaces,
// each float32 in its shortest exact decimal form (for files).
func (c *Calibration) Text() string {
	var b strings.Builder
	for i, r := range c.Ranges {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatFloat(float64(r.Min), 'g', -1, 32))
		b.WriteByte(' ')
		b.WriteString(strconv.FormatFloat(float64(r.Max), 'g', -1, 32))
	}
	return b.String()
}

// ParseCalibration reads ranges written by Text, bit for bit; it refuses
// an odd count, non-numbers, non-finite and inverted ranges.
func ParseCalibration(s string) (*Calibration, error) {
	f := strings.Fields(s)
	if len(f)%2 != 0 {
		return nil, fmt.Errorf("calibration: %d values, want min/max pairs", len(f))
	}
	c := &Calibration{Ranges: make([]Range, len(f)/2)}
	for i := range c.Ranges {
		var v [2]float32
		for k := range v {
			x, err := strconv.ParseFloat(f[2*i+k], 32)
			if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
				return nil, fmt.Errorf("calibration: value %d %q is not a finite number", 2*i+k, f[2*i+k])
			}
			v[k] = float32(x)
		}
		if v[0] > v[1] {
			return nil, fmt.Errorf("calibration: range %d is [%g, %g]", i, v[0], v[1])
		}
		c.Ranges[i] = Range{Min: v[0], Max: v[1]}
	}
	return c, nil
}
