package backbone

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/flycl/flycl/format/onnx"
	"github.com/flycl/flycl/vision/imageio"
	"github.com/flycl/flycl/vision/transform"
)

// tinyConvNet is a Builder for the wiring tests: input 3×8×8, then per
// layer a 3×3 convolution (pad 1) + ReLU, every activation quantized; the
// output is the last activation flattened.
func tinyConvNet(w *Weights, layers int) Builder {
	return func(opts ...Option) (*Model, error) {
		b := newBuilder("tiny", w, opts, nil)
		y := b.act(b.g.Input("images", -1, 3, 8, 8))
		ch := int64(3)
		for l := 0; l < layers; l++ {
			var err error
			y, ch, err = b.conv(y, fmt.Sprintf("c%d_weight", l), fmt.Sprintf("c%d_bias", l), 1, 1)
			if err != nil {
				return nil, err
			}
			y = b.act(b.relu(y))
		}
		y = b.g.Node("Flatten", []string{y}, onnx.AInt("axis", 1))
		return b.finish("tiny", []string{y}, []string{"features"}, []int{int(ch) * 64}, 8, transform.Presets["imagenet"])
	}
}

func tinyWeights(seed uint64, chans []int) *Weights {
	r := rand.New(rand.NewPCG(seed, 1))
	w := &Weights{Source: "tiny", Tensors: map[string]Tensor{}}
	for l := 0; l+1 < len(chans); l++ {
		o, i := int64(chans[l+1]), int64(chans[l])
		wt := Tensor{Shape: []int64{o, i, 3, 3}, Data: make([]float32, o*i*9)}
		for j := range wt.Data {
			wt.Data[j] = float32(r.NormFloat64() / math.Sqrt(float64(i*9)))
		}
		bt := Tensor{Shape: []int64{o}, Data: make([]float32, o)}
		for j := range bt.Data {
			bt.Data[j] = float32(0.1 * r.NormFloat64())
		}
		w.Tensors[fmt.Sprintf("c%d_weight", l)] = wt
		w.Tensors[fmt.Sprintf("c%d_bias", l)] = bt
	}
	return w
}

func randomImages(seed uint64, n, size int) []float32 {
	r := rand.New(rand.NewPCG(seed, 2))
	x := make([]float32, n*3*size*size)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// refConv is an independent float64 3×3 convolution (pad 1) + ReLU on
// one C×8×8 image.
func refConv(x []float64, cin int, w, b []float64, cout int) []float64 {
	y := make([]float64, cout*64)
	for o := 0; o < cout; o++ {
		for h := 0; h < 8; h++ {
			for v := 0; v < 8; v++ {
				s := b[o]
				for c := 0; c < cin; c++ {
					for kh := 0; kh < 3; kh++ {
						for kw := 0; kw < 3; kw++ {
							hh, vv := h+kh-1, v+kw-1
							if hh < 0 || hh >= 8 || vv < 0 || vv >= 8 {
								continue
							}
							s += w[((o*cin+c)*3+kh)*3+kw] * x[(c*8+hh)*8+vv]
						}
					}
				}
				y[(o*8+h)*8+v] = math.Max(0, s)
			}
		}
	}
	return y
}

// simQDQ is ONNX's QuantizeLinear then DequantizeLinear (uint8, round
// half to even, saturate), written from the operator specification.
func simQDQ(x float64, scale float64, zp int) float64 {
	q := math.RoundToEven(x/scale) + float64(zp)
	q = math.Max(0, math.Min(255, q))
	return (q - float64(zp)) * scale
}

// TestInt8ConvMatchesSimulation checks that the int8 graph is wired right:
// its calibration ranges equal the float64 reference's activation ranges,
// ONNX Runtime's int8 output equals an independent float64 simulation of
// the quantized arithmetic (per-channel int8 weights, int32 bias at scale
// s_x·s_w, uint8 activations), and that simulation stays within an error
// bound derived from the scales of the float result.
func TestInt8ConvMatchesSimulation(t *testing.T) {
	chans := []int{3, 6, 5}
	w := tinyWeights(7, chans)
	build := tinyConvNet(w, 2)
	const n = 16
	x := randomImages(3, n, 8)
	cal, err := Calibrate(context.Background(), build, CalibMinMax, x, n, 5, 1)
	if errorsIsNoRuntime(err) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.Ranges) != 3 {
		t.Fatalf("%d calibration ranges, want 3 (input + 2 layers)", len(cal.Ranges))
	}
	q, err := build(Quantized(cal))
	if err != nil {
		t.Fatal(err)
	}
	f, err := build()
	if err != nil {
		t.Fatal(err)
	}
	if q.Precision != INT8 || f.Precision != FP32 || q.Hash == f.Hash || q.Name == f.Name {
		t.Fatalf("identity: int8 %s %s %s, fp32 %s %s %s", q.Name, q.Precision, q.Hash, f.Name, f.Precision, f.Hash)
	}
	outQ, err := session(t, q).Run(x, n)
	if err != nil {
		t.Fatal(err)
	}
	outF, err := session(t, f).Run(x, n)
	if err != nil {
		t.Fatal(err)
	}

	// float64 reference, ranges, and the quantized simulation
	f64 := func(v []float32) []float64 {
		r := make([]float64, len(v))
		for i := range v {
			r[i] = float64(v[i])
		}
		return r
	}
	ranges := make([]Range, 3)
	for i := range ranges {
		ranges[i] = Range{float32(math.Inf(1)), float32(math.Inf(-1))}
	}
	observe := func(i int, v []float64) {
		for _, a := range v {
			ranges[i].Min = min(ranges[i].Min, float32(a))
			ranges[i].Max = max(ranges[i].Max, float32(a))
		}
	}
	// quantized weights, written independently of quantizeRows
	type qlayer struct{ w, wErr, b, bErr []float64 }
	params := func(r Range) (float64, int) {
		lo, hi := math.Min(0, float64(r.Min)), math.Max(0, float64(r.Max))
		s := (hi - lo) / 255
		return s, int(math.Max(0, math.Min(255, math.Round(-lo/s))))
	}
	per := 3 * 64
	outDim := chans[2] * 64
	var worstLevels, worstBoundUse float64
	mismatch := 0
	for img := 0; img < n; img++ {
		ref := f64(x[img*per : (img+1)*per])
		sim := slices.Clone(ref)
		s0, z0 := params(cal.Ranges[0])
		errIn := make([]float64, len(ref)) // bound on |sim - ref| per element
		for i := range sim {
			sim[i] = simQDQ(sim[i], s0, z0)
			errIn[i] = math.Abs(sim[i] - ref[i])
			if errIn[i] > s0/2*(1+1e-9) {
				t.Fatalf("input quantization error %g > s/2 = %g", errIn[i], s0/2)
			}
		}
		observe(0, ref)
		cin := 3
		var sl float64
		var wAbs2 []float64
		for l := 0; l < 2; l++ {
			wt, bt := w.Tensors[fmt.Sprintf("c%d_weight", l)], w.Tensors[fmt.Sprintf("c%d_bias", l)]
			cout := chans[l+1]
			sx, _ := params(cal.Ranges[l])
			wq, bq := make([]float64, len(wt.Data)), make([]float64, cout)
			wAbs := make([]float64, cout)
			k := len(wt.Data) / cout
			for o := 0; o < cout; o++ {
				var m float64
				for _, v := range wt.Data[o*k : (o+1)*k] {
					m = math.Max(m, math.Abs(float64(v)))
				}
				sw := m / 127
				for j := o * k; j < (o+1)*k; j++ {
					wq[j] = math.Round(float64(wt.Data[j])/sw) * sw
					wAbs[o] += math.Abs(wq[j])
				}
				bq[o] = math.Round(float64(bt.Data[o])/(sx*sw)) * (sx * sw)
			}
			wAbs2 = wAbs
			refNext := refConv(ref, cin, f64(wt.Data), f64(bt.Data), cout)
			simNext := refConv(sim, cin, wq, bq, cout)
			observe(l+1, refNext)
			// error bound before output quantization:
			// Σ|ŵ|·e_in + Σ|x|·|w-ŵ| + |b-b̂|, through the 1-Lipschitz ReLU
			absRef := make([]float64, len(ref))
			for i := range ref {
				absRef[i] = math.Abs(ref[i])
			}
			wErr := make([]float64, len(wq))
			for j := range wq {
				wErr[j] = math.Abs(float64(wt.Data[j]) - wq[j])
			}
			bErr := make([]float64, cout)
			absWq := make([]float64, len(wq))
			for o := range bErr {
				bErr[o] = math.Abs(float64(bt.Data[o]) - bq[o])
			}
			for j := range wq {
				absWq[j] = math.Abs(wq[j])
			}
			e1 := refConvLinear(errIn, cin, absWq, cout)
			e2 := refConvLinear(absRef, cin, wErr, cout)
			sOut, zOut := params(cal.Ranges[l+1])
			sl = sOut
			errNext := make([]float64, len(simNext))
			for i := range simNext {
				simNext[i] = simQDQ(simNext[i], sOut, zOut)
				errNext[i] = e1[i] + e2[i] + bErr[i/64] + sOut/2
				d := math.Abs(simNext[i] - refNext[i])
				if d > errNext[i]*(1+1e-6)+1e-9 {
					t.Fatalf("image %d layer %d element %d: simulation differs from float by %g, bound %g", img, l, i, d, errNext[i])
				}
				worstBoundUse = math.Max(worstBoundUse, d/errNext[i])
			}
			ref, sim, errIn, cin = refNext, simNext, errNext, cout
		}
		// ONNX Runtime's int8 output against the simulation, in units of
		// the last activation scale; a requantization rounding in layer 1
		// that differs by one level moves a layer-2 output by at most
		// Σ|ŵ|·s1 (every input one level off).
		s1, _ := params(cal.Ranges[1])
		for i := 0; i < outDim; i++ {
			got := float64(outQ[0][img*outDim+i])
			d := math.Abs(got - sim[i])
			worstLevels = math.Max(worstLevels, d/sl)
			if d > 0.5*sl {
				mismatch++
			}
			if d > sl+wAbs2[i/64]*s1 {
				t.Fatalf("image %d output %d: ONNX Runtime int8 %g, simulation %g (bound %g)", img, i, got, sim[i], sl+wAbs2[i/64]*s1)
			}
			// and the float graph against the float64 reference (float32 rounding)
			if df := math.Abs(float64(outF[0][img*outDim+i]) - ref[i]); df > 1e-4*(1+math.Abs(ref[i])) {
				t.Fatalf("float graph output %d: %g vs reference %g", i, outF[0][img*outDim+i], ref[i])
			}
		}
	}
	for i, r := range ranges {
		c := cal.Ranges[i]
		tol := 1e-5 * math.Max(math.Abs(float64(r.Min)), math.Abs(float64(r.Max)))
		if math.Abs(float64(c.Min-r.Min)) > tol || math.Abs(float64(c.Max-r.Max)) > tol {
			t.Errorf("calibration range %d: %v, reference %v", i, c, r)
		}
	}
	frac := float64(mismatch) / float64(n*outDim)
	t.Logf("int8 vs simulation: %.2f%% of outputs off by a level, worst %.2f levels; simulation vs float uses %.0f%% of the derived bound at most",
		100*frac, worstLevels, 100*worstBoundUse)
	if frac > 0.02 {
		t.Errorf("%.1f%% of int8 outputs differ from the simulation by a level or more", 100*frac)
	}
}

// refConvLinear is refConv without bias and ReLU (propagates bounds).
func refConvLinear(x []float64, cin int, w []float64, cout int) []float64 {
	y := make([]float64, cout*64)
	for o := 0; o < cout; o++ {
		for h := 0; h < 8; h++ {
			for v := 0; v < 8; v++ {
				var s float64
				for c := 0; c < cin; c++ {
					for kh := 0; kh < 3; kh++ {
						for kw := 0; kw < 3; kw++ {
							hh, vv := h+kh-1, v+kw-1
							if hh < 0 || hh >= 8 || vv < 0 || vv >= 8 {
								continue
							}
							s += w[((o*cin+c)*3+kh)*3+kw] * x[(c*8+hh)*8+vv]
						}
					}
				}
				y[(o*8+h)*8+v] = s
			}
		}
	}
	return y
}

// TestDynamicMatMulMatchesSimulation checks ViT's dynamically quantized
// linear layer against ONNX's DynamicQuantizeLinear and MatMulInteger
// semantics written out in float64: the integer product is exact, so the
// only differences are float32 roundings of the scales (1e-5 relative).
func TestDynamicMatMulMatchesSimulation(t *testing.T) {
	const in, out, n = 12, 5, 4
	r := rand.New(rand.NewPCG(11, 3))
	wm := make([]float32, in*out)
	for i := range wm {
		wm[i] = float32(r.NormFloat64())
	}
	build := func(opts ...Option) (*Model, error) {
		b := newBuilder("mm", &Weights{Tensors: map[string]Tensor{}}, opts, nil)
		x := b.g.Node("Flatten", []string{b.g.Input("images", -1, 3, 2, 2)}, onnx.AInt("axis", 1))
		return b.finish("mm", []string{b.dynamicMatMul(x, in, out, wm)}, []string{"features"}, []int{out}, 2, transform.Presets["imagenet"])
	}
	m, err := build(Quantized(nil))
	if err != nil {
		t.Fatal(err)
	}
	x := randomImages(5, n, 2)
	got, err := session(t, m).Run(x, n)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := 0.0, 0.0
	for _, v := range x {
		lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
	}
	sx := float64(float32((hi - lo) / 255))
	zp := math.Max(0, math.Min(255, math.RoundToEven(-lo/sx)))
	for s := 0; s < n; s++ {
		for o := 0; o < out; o++ {
			var m float64
			for i := 0; i < in; i++ {
				m = math.Max(m, math.Abs(float64(wm[i*out+o])))
			}
			sw := float64(float32(m / 127))
			var acc float64
			for i := 0; i < in; i++ {
				q := math.Max(0, math.Min(255, math.RoundToEven(float64(x[s*in+i])/sx)+zp))
				acc += (q - zp) * math.Max(-127, math.Min(127, math.Round(float64(wm[i*out+o])/sw)))
			}
			want := acc * sx * sw
			if d := math.Abs(float64(got[0][s*out+o]) - want); d > 1e-5*(math.Abs(want)+sx*sw*127*in) {
				t.Errorf("sample %d output %d: %g, simulation %g", s, o, got[0][s*out+o], want)
			}
		}
	}
}

// TestTinyInt8Checkpoints runs the int8 graphs of the tiny ResNet (static,
// calibrated on the 2 inputs) and ViT (dynamic) checkpoints and compares
// their features with the float graphs: cosine similarity above 0.99
// (8-bit steps are ~0.4% of each tensor's range; a handful of layers
// compound to about 1%, i.e. cosine ≥ 1 - 0.01²/2 per vector and well above 0.99).
func TestTinyInt8Checkpoints(t *testing.T) {
	for _, c := range []struct {
		file  string
		build func(*Weights) Builder
		n     int
	}{
		{"tiny_resnet.safetensors", func(w *Weights) Builder {
			return func(o ...Option) (*Model, error) { return ResNet50(w, o...) }
		}, 2},
		{"tiny_vit.safetensors", func(w *Weights) Builder {
			return func(o ...Option) (*Model, error) { return ViT(w, 3, o...) }
		}, 3},
	} {
		w, err := LoadCheckpoint(filepath.Join("testdata", c.file))
		if err != nil {
			t.Fatal(err)
		}
		build := c.build(w)
		f, err := build()
		if err != nil {
			t.Fatal(err)
		}
		x := formulaInputs(c.n, f.Size)
		q, err := Int8(context.Background(), build, CalibMinMax, x, c.n, 1)
		if errorsIsNoRuntime(err) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatal(c.file, err)
		}
		of, err := session(t, f).Run(x, c.n)
		if err != nil {
			t.Fatal(err)
		}
		oq, err := session(t, q).Run(x, c.n)
		if err != nil {
			t.Fatal(c.file, err)
		}
		d := f.Dims[0]
		for i := 0; i < c.n; i++ {
			cs := cosine(of[0][i*d:(i+1)*d], oq[0][i*d:(i+1)*d])
			t.Logf("%s image %d: cosine fp32/int8 %.5f", c.file, i, cs)
			if cs < 0.99 {
				t.Errorf("%s image %d: cosine %.4f", c.file, i, cs)
			}
		}
	}
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

func errorsIsNoRuntime(err error) bool {
	return err != nil && errors.Is(err, ErrNoRuntime)
}

// photos preprocesses the shared ImageNet sample photos with indices idx.
func photos(t *testing.T, files []string, idx []int) []float32 {
	t.Helper()
	per := 3 * 224 * 224
	x := make([]float32, len(idx)*per)
	for k, i := range idx {
		img, err := imageio.DecodeFile(files[i])
		if err != nil {
			t.Fatal(err)
		}
		transform.Presets["imagenet"].Tensor(img, x[k*per:(k+1)*per])
	}
	return x
}

// TestInt8RealPhotos measures, on the shared ImageNet sample (calibration
// on 32 photos, every 16th; evaluation on the other 468): SqueezeNet 1.1
// top-1 fp32 vs int8, and the fp32/int8 feature cosine similarity (median,
// worst) of SqueezeNet and MobileNetV2, for each calibration method of
// int8Methods. Requirements: top-1 within 3
// points (a paired difference on 468 photos; the literature reports < 1
// point for per-channel static int8 CNNs), median cosine ≥ 0.98.
func TestInt8RealPhotos(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(shared, "data", "imagenet-sample-500", "*.JPEG"))
	slices.Sort(files)
	if len(files) != 500 {
		t.Skip("shared images not available")
	}
	var calib, eval []int
	for i := range files {
		if i%16 == 0 {
			calib = append(calib, i)
		} else {
			eval = append(eval, i)
		}
	}
	if testing.Short() {
		eval = eval[:64]
	}
	xc := photos(t, files, calib)
	xe := photos(t, files, eval)
	per := 3 * 224 * 224
	for _, c := range []struct {
		dir   string
		build func(*Weights, ...Option) (*Model, error)
	}{{"squeezenet1.1", SqueezeNet}, {"mobilenetv2-1.0", MobileNetV2}} {
		f := sharedModel(t, c.dir, c.build)
		w, err := LoadNPYDir(filepath.Join(shared, "models", c.dir))
		if err != nil {
			t.Fatal(err)
		}
		sf := session(t, f)
		const batch = 26
		d := f.Dims[0]
		var of [][]float32 // fp32 outputs per batch
		for lo := 0; lo < len(eval); lo += batch {
			k := min(batch, len(eval)-lo)
			o, err := sf.Run(xe[lo*per:(lo+k)*per], k)
			if err != nil {
				t.Fatal(err)
			}
			of = append(of, o...)
		}
		nout := len(f.Dims)
		hitF := 0
		if nout > 1 {
			for bi := 0; bi*nout < len(of); bi++ {
				for i := 0; i*1000 < len(of[bi*nout+1]); i++ {
					if argmax(of[bi*nout+1][i*1000:(i+1)*1000]) == 2*eval[bi*batch+i] {
						hitF++
					}
				}
			}
		}
		median := map[CalibMethod]float64{}
		for _, method := range int8Methods {
			q, err := Int8(context.Background(), func(o ...Option) (*Model, error) { return c.build(w, o...) }, method, xc, len(calib), 0)
			if errorsIsNoRuntime(err) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			sq := session(t, q)
			var cos []float64
			hitQ := 0
			for bi, lo := 0, 0; lo < len(eval); bi, lo = bi+1, lo+batch {
				k := min(batch, len(eval)-lo)
				oq, err := sq.Run(xe[lo*per:(lo+k)*per], k)
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < k; i++ {
					cos = append(cos, cosine(of[bi*nout][i*d:(i+1)*d], oq[0][i*d:(i+1)*d]))
					if nout > 1 && argmax(oq[1][i*1000:(i+1)*1000]) == 2*eval[lo+i] {
						hitQ++
					}
				}
			}
			slices.Sort(cos)
			median[method] = cos[len(cos)/2]
			t.Logf("%s %s: feature cosine fp32/int8 on %d photos: median %.4f, worst %.4f", c.dir, method, len(cos), cos[len(cos)/2], cos[0])
			if cos[len(cos)/2] < 0.98 {
				t.Errorf("%s %s: median cosine %.4f", c.dir, method, cos[len(cos)/2])
			}
			if nout > 1 {
				af, aq := float64(hitF)/float64(len(eval)), float64(hitQ)/float64(len(eval))
				t.Logf("%s %s top-1 on %d held-out photos: fp32 %.1f%%, int8 %.1f%%", c.dir, method, len(eval), 100*af, 100*aq)
				if !testing.Short() && aq < af-0.03 {
					t.Errorf("%s: int8 top-1 %.1f%% is more than 3 points below fp32 %.1f%%", method, 100*aq, 100*af)
				}
			}
		}
		// MobileNetV2 is where min/max ranges lose most (its median cosine
		// 0.986 vs MSE's 0.990 on the first 64 photos): MSE must not be worse
		if c.dir == "mobilenetv2-1.0" && median[CalibMSE] < median[CalibMinMax] {
			t.Errorf("%s: MSE calibration's median cosine %.4f is below min/max's %.4f", c.dir, median[CalibMSE], median[CalibMinMax])
		}
	}
}

// int8Methods are the calibration methods TestInt8RealPhotos compares:
// min/max and MSE (flycl's default).
var int8Methods = []CalibMethod{CalibMinMax, CalibMSE}

func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

// TestInt8GraphsFuse checks that ONNX Runtime turns the QDQ convolutions
// into QLinearConv and the dynamic linear layers into
// DynamicQuantizeMatMul (its optimised graph, written to a file, names
// them), i.e. that the int8 graphs run integer kernels rather than
// dequantize-then-float.
func TestInt8GraphsFuse(t *testing.T) {
	conv := tinyConvNet(tinyWeights(7, []int{3, 6, 5}), 2)
	x := randomImages(3, 4, 8)
	qc, err := Int8(context.Background(), conv, CalibMinMax, x, 4, 1)
	if errors.Is(err, ErrNoRuntime) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	w, err := LoadCheckpoint(filepath.Join("testdata", "tiny_vit.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	qv, err := ViT(w, 3, Quantized(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		m    *Model
		want string
		n    int
	}{{qc, "QLinearConv", 2}, {qv, "DynamicQuantizeMatMul", 1}} {
		data := optimisedGraph(t, c.m)
		if k := bytes.Count(data, []byte(c.want)); k < c.n {
			t.Errorf("%s: optimised graph has %d %s nodes, want at least %d", c.m.Name, k, c.want, c.n)
		}
	}
}

// optimisedOps returns the operator types (domain:op) of the graph ONNX
// Runtime's optimiser (level all, as sessions use) makes of m, counted.
func optimisedOps(t *testing.T, m *Model) map[string]int {
	t.Helper()
	data := optimisedGraph(t, m)
	ops := map[string]int{}
	// ModelProto.graph (7) → GraphProto.node (1) → NodeProto.op_type (4), domain (7)
	eachField(t, data, func(n protowire.Number, g []byte) {
		if n != 7 {
			return
		}
		eachField(t, g, func(n protowire.Number, node []byte) {
			if n != 1 {
				return
			}
			var op, dom string
			eachField(t, node, func(n protowire.Number, v []byte) {
				switch n {
				case 4:
					op = string(v)
				case 7:
					dom = string(v)
				}
			})
			ops[dom+":"+op]++
		})
	})
	return ops
}

// eachField calls f with every length-delimited field of a protobuf message.
func eachField(t *testing.T, b []byte, f func(protowire.Number, []byte)) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("bad protobuf tag")
		}
		b = b[n:]
		if typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				t.Fatalf("bad protobuf field")
			}
			f(num, v)
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			t.Fatalf("bad protobuf field")
		}
		b = b[m:]
	}
}

// TestInt8ResNetRunsIntegerKernels checks what stays float in ONNX
// Runtime's optimised int8 ResNet (the tiny checkpoint, ResNet-50's
// structure: stem, max pool, bottlenecks with downsample, residual Add +
// ReLU): every convolution a QLinearConv, every residual Add a QLinearAdd
// (the ReLU after it removed), the max pool on uint8 in NHWC; float only
// after the last DequantizeLinear (global average pool, fc), and one
// QuantizeLinear at the input.
func TestInt8ResNetRunsIntegerKernels(t *testing.T) {
	w, err := LoadCheckpoint(filepath.Join("testdata", "tiny_resnet.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	build := func(o ...Option) (*Model, error) { return ResNet50(w, o...) }
	f, err := build()
	if err != nil {
		t.Fatal(err)
	}
	q, err := Int8(context.Background(), build, CalibMinMax, formulaInputs(2, f.Size), 2, 1)
	if errorsIsNoRuntime(err) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	convs := 0
	for name := range w.Tensors {
		if strings.HasSuffix(name, ".weight") && len(w.Tensors[name].Shape) == 4 {
			convs++
		}
	}
	ops := optimisedOps(t, q)
	t.Logf("optimised int8 graph: %v", ops)
	if ops["com.microsoft:QLinearConv"] != convs {
		t.Errorf("%d QLinearConv, want one per convolution (%d)", ops["com.microsoft:QLinearConv"], convs)
	}
	if ops["com.microsoft:QLinearAdd"] == 0 {
		t.Error("no QLinearAdd: the residual sums run in float")
	}
	for _, float := range []string{":Conv", ":Add", ":Relu", ":MaxPool", ":FusedConv", "com.microsoft:FusedConv"} {
		if ops[float] != 0 {
			t.Errorf("%d float %s nodes remain", ops[float], float)
		}
	}
	if ops[":QuantizeLinear"] != 1 || ops[":DequantizeLinear"] != 1 {
		t.Errorf("%d QuantizeLinear and %d DequantizeLinear, want 1 each (input, before pooling)", ops[":QuantizeLinear"], ops[":DequantizeLinear"])
	}
}

// TestCalibrationText: Text/ParseCalibration round-trip every float32 bit
// for bit (so a model file rebuilds the same graph and Hash), and bad text
// is refused with an error.
func TestCalibrationText(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	c := &Calibration{}
	for i := 0; i < 200; i++ {
		a, b := float32(r.NormFloat64()*math.Pow(10, float64(r.IntN(20)-10))), float32(r.NormFloat64())
		c.Ranges = append(c.Ranges, Range{min(a, b), max(a, b)})
	}
	c.Ranges = append(c.Ranges, Range{0, 0}, Range{-math.MaxFloat32, math.MaxFloat32}, Range{math.SmallestNonzeroFloat32, 1})
	back, err := ParseCalibration(c.Text())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Ranges, c.Ranges) || back.Hash() != c.Hash() {
		t.Fatal("calibration text does not round-trip")
	}
	for _, bad := range []string{"1", "1 x", "2 1", "NaN 1", "0 +Inf", "1e39 1e40"} {
		if _, err := ParseCalibration(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzParseCalibration: any text either is refused or parses to ranges
// that Text writes back to the same ranges.
func FuzzParseCalibration(f *testing.F) {
	for _, s := range []string{"", "0 1", "-1.5 2.25 0 6", "1 x", "2 1", "NaN 1", "1e39 1e40", " 0\t1\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCalibration(s)
		if err != nil {
			return
		}
		back, err := ParseCalibration(c.Text())
		if err != nil || !slices.Equal(back.Ranges, c.Ranges) {
			t.Fatalf("%q: round trip %v %v", s, err, back)
		}
	})
}
