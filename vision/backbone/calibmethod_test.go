package backbone

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestParseCalibMethod(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"", "minmax", true}, {"minmax", "minmax", true}, {"mse", "mse", true},
		{"percentile", "percentile:99.999", true}, {"percentile:99.99", "percentile:99.99", true},
		{"percentile:99.9900", "percentile:99.99", true},
		{"percentile:100", "", false}, {"percentile:50", "", false}, {"percentile:x", "", false},
		{"percentile:NaN", "", false}, {"entropy", "", false}, {"MinMax", "", false},
	} {
		m, err := ParseCalibMethod(c.in)
		if (err == nil) != c.ok || string(m) != c.want {
			t.Errorf("ParseCalibMethod(%q) = %q, %v; want %q, ok %v", c.in, m, err, c.want, c.ok)
		}
	}
}

// mseObjective evaluates mseRange's objective for the range [edge i, edge
// j] directly, bin by bin (the brute-force truth for its prefix sums).
func mseObjective(h *histogram, i, j int) float64 {
	w := h.width()
	lo, hi := h.lo+float64(i)*w, h.lo+float64(j)*w
	s := (hi - lo) / 255
	var e float64
	for k, n := range h.count {
		switch c := h.center(k); {
		case c < lo:
			e += n * (c - lo) * (c - lo)
		case c > hi:
			e += n * (c - hi) * (c - hi)
		default:
			e += n * s * s / 12
		}
	}
	return e
}

// TestMSERangeMatchesBruteForce: on random two-sided and one-sided
// histograms, the range mseRange picks attains the minimum of its
// objective over every candidate pair of bin edges, evaluated directly.
func TestMSERangeMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for trial := 0; trial < 20; trial++ {
		lo := -r.Float64() * 3
		if trial%4 == 0 {
			lo = 0 // post-ReLU: one-sided
		}
		h := newHistogram(Range{Min: float32(lo), Max: float32(0.5 + 4*r.Float64())}, 64)
		for k := range h.count {
			// heavy mass near 0, a thin tail: the case clipping helps
			c := math.Abs(h.center(k))
			h.count[k] = math.Floor(1e4 * math.Exp(-c*(1+4*r.Float64())) * r.Float64())
		}
		h.zeros = 1e5
		got := h.mseRange()
		w := h.width()
		best, z := math.Inf(1), h.zeroBin()
		for i := 0; i <= z; i++ {
			for j := z + 1; j <= len(h.count); j++ {
				best = min(best, mseObjective(h, i, j))
			}
		}
		i := int(math.Round((float64(got.Min) - h.lo) / w))
		j := int(math.Round((float64(got.Max) - h.lo) / w))
		e := mseObjective(h, i, j)
		// the two sums differ only by float64 rounding of ~B terms
		if e > best*(1+1e-9) {
			t.Errorf("trial %d: mseRange [%g, %g] has objective %g, brute force finds %g", trial, got.Min, got.Max, e, best)
		}
	}
}

// quantMSE is the mean squared error of quantizing v to uint8 over range
// r exactly as the int8 graph does (activationParams, then QDQ with
// round-half-to-even and saturation; simQDQ is the test's independent
// simulation of the ONNX operators).
func quantMSE(v []float64, r Range) float64 {
	p := activationParams(r)
	var e float64
	for _, x := range v {
		d := simQDQ(x, float64(p.scale), int(p.zp)) - x
		e += d * d
	}
	return e / float64(len(v))
}

// TestCalibMethodsOnSamples checks the histogram methods against the
// samples themselves: the percentile range brackets the exact sample
// quantiles within one bin, and the MSE range's real quantization error
// (simulated QDQ of every sample) is below min/max's and within 2% of the
// best upper clip found by a fine brute-force search on the samples.
func TestCalibMethodsOnSamples(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	for _, c := range []struct {
		name string
		draw func() float64
	}{
		{"relu-laplace", func() float64 { return max(0, r.ExpFloat64()*float64(1-2*r.IntN(2))) }},
		{"laplace", func() float64 { return r.ExpFloat64() * float64(1-2*r.IntN(2)) }},
		{"gauss+outliers", func() float64 {
			if r.IntN(2000) == 0 {
				return 20 * r.Float64()
			}
			return r.NormFloat64()
		}},
	} {
		v := make([]float64, 50000)
		v32 := make([]float32, len(v))
		mm := Range{Min: float32(math.Inf(1)), Max: float32(math.Inf(-1))}
		for i := range v {
			v32[i] = float32(c.draw())
			v[i] = float64(v32[i])
			mm.Min, mm.Max = min(mm.Min, v32[i]), max(mm.Max, v32[i])
		}
		h := newHistogram(mm, calibBins)
		h.add(v32[:len(v)/2])
		h.add(v32[len(v)/2:])

		for _, p := range []float64{99.9, 99.99} {
			got := h.percentileRange(p)
			s := slices.Clone(v)
			slices.Sort(s)
			cut := (100 - p) / 200 * float64(len(s))
			qlo, qhi := s[int(cut)], s[len(s)-1-int(cut)]
			w := h.width() * (1 + 1e-9)
			if float64(got.Min) > qlo+1e-12 || float64(got.Min) < qlo-w || float64(got.Max) < qhi-1e-12 || float64(got.Max) > qhi+w {
				t.Errorf("%s: percentile %g range [%g, %g], sample quantiles [%g, %g], bin %g", c.name, p, got.Min, got.Max, qlo, qhi, w)
			}
		}

		got := h.mseRange()
		eMSE, eMax := quantMSE(v, got), quantMSE(v, mm)
		// brute force over the upper clip (and the lower, scaled alike) on the samples
		best := math.Inf(1)
		for k := 1; k <= 200; k++ {
			f := float32(k) / 200
			best = min(best, quantMSE(v, Range{Min: mm.Min * f, Max: mm.Max * f}), quantMSE(v, Range{Min: mm.Min, Max: mm.Max * f}))
		}
		t.Logf("%s: mse range [%.3f, %.3f] of [%.3f, %.3f]: quantization MSE %.3g, min/max %.3g, brute force %.3g", c.name, got.Min, got.Max, mm.Min, mm.Max, eMSE, eMax, best)
		if eMSE > eMax || eMSE > best*1.02 {
			t.Errorf("%s: MSE range's error %.4g (min/max %.4g, brute force best %.4g)", c.name, eMSE, eMax, best)
		}
	}
}

// TestCalibrateHistogramMethodsWiring runs Calibrate's histogram pass on
// the tiny conv net (points: input, ReLU(conv0), ReLU(conv1)) and checks
// its ranges against the same methods applied to activations computed
// independently in float64 (refConv): the right tensor reaches the right
// point's histogram, over every image. ONNX Runtime's float32 activations
// differ from float64 by rounding, which moves a value across a bin edge
// only when it lies within ~1e-6 of it: percentile ranges may differ by a
// bin, and the MSE range's objective (on the reference histogram) must
// equal the reference optimum's to 1e-6.
func TestCalibrateHistogramMethodsWiring(t *testing.T) {
	chans := []int{3, 6, 5}
	w := tinyWeights(7, chans)
	build := tinyConvNet(w, 2)
	const n = 16
	x := randomImages(3, n, 8)
	// reference activations per point, all images
	acts := make([][]float32, 3)
	for img := 0; img < n; img++ {
		a := make([]float64, 3*64)
		for i := range a {
			a[i] = float64(x[img*3*64+i])
		}
		cin := 3
		for p := 0; p < 3; p++ {
			for _, v := range a {
				acts[p] = append(acts[p], float32(v))
			}
			if p == 2 {
				break
			}
			wt, bt := w.Tensors[fmt.Sprintf("c%d_weight", p)], w.Tensors[fmt.Sprintf("c%d_bias", p)]
			wf, bf := make([]float64, len(wt.Data)), make([]float64, len(bt.Data))
			for i, v := range wt.Data {
				wf[i] = float64(v)
			}
			for i, v := range bt.Data {
				bf[i] = float64(v)
			}
			a = refConv(a, cin, wf, bf, chans[p+1])
			cin = chans[p+1]
		}
	}
	refHist := make([]*histogram, 3)
	for p, v := range acts {
		r := Range{Min: float32(math.Inf(1)), Max: float32(math.Inf(-1))}
		for _, a := range v {
			r.Min, r.Max = min(r.Min, a), max(r.Max, a)
		}
		refHist[p] = newHistogram(r, calibBins)
		refHist[p].add(v)
	}
	for _, method := range []CalibMethod{"percentile:99", CalibMSE} {
		cal, err := Calibrate(context.Background(), build, method, x, n, 5, 1)
		if errorsIsNoRuntime(err) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(cal.Ranges) != 3 || cal.Method != method {
			t.Fatalf("%s: %d ranges, method %q", method, len(cal.Ranges), cal.Method)
		}
		for p, h := range refHist {
			got := cal.Ranges[p]
			bin := h.width()
			if method == CalibMSE {
				want := h.mseRange()
				ge := mseObjective(h, int(math.Round((float64(got.Min)-h.lo)/bin)), int(math.Round((float64(got.Max)-h.lo)/bin)))
				we := mseObjective(h, int(math.Round((float64(want.Min)-h.lo)/bin)), int(math.Round((float64(want.Max)-h.lo)/bin)))
				if math.Abs(ge-we) > 1e-6*we || math.Abs(float64(got.Max-want.Max)) > 0.05*(h.hi-h.lo) {
					t.Errorf("point %d: mse range %v (objective %g), reference %v (%g)", p, got, ge, want, we)
				}
				continue
			}
			want := h.percentileRange(99)
			if math.Abs(float64(got.Min-want.Min)) > 1.01*bin || math.Abs(float64(got.Max-want.Max)) > 1.01*bin {
				t.Errorf("point %d: percentile range %v, reference %v (bin %g)", p, got, want, bin)
			}
			if want.Max >= float32(h.hi)-float32(bin) {
				t.Errorf("point %d: percentile:99 clipped nothing (%v of [%g, %g]): the test checks nothing", p, want, h.lo, h.hi)
			}
		}
	}
}
