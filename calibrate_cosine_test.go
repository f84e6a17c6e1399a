package flycl

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/flycl/flycl/reject"
)

// bruteCosine returns the largest cosine of x to the float64 sums of the
// rows of codes (rows of m) by class (labels: class indices 0..nc-1),
// leaving out row skip (-1: none): computed from the codes alone,
// independently of S and of reject.ClassCosine.
func bruteCosine(codes []float32, labels []int, nc, m int, x []float32, skip int) float64 {
	sums := make([][]float64, nc)
	for c := range sums {
		sums[c] = make([]float64, m)
	}
	have := make([]int, nc)
	for i, l := range labels {
		if i == skip {
			continue
		}
		have[l]++
		for j, v := range codes[i*m : (i+1)*m] {
			sums[l][j] += float64(v)
		}
	}
	best := math.Inf(-1)
	for c, s := range sums {
		if have[c] == 0 {
			continue
		}
		var num, ss, xx float64
		for j, v := range s {
			num += v * float64(x[j])
			ss += v * v
			xx += float64(x[j]) * float64(x[j])
		}
		best = max(best, num/math.Sqrt(ss*xx))
	}
	return best
}

// TestTopCosineCalibration: a model calibrated on reject.ScoreTopCosine keeps
// (top, cosine) pairs of its learn's samples in its pool: the top
// leave-one-out scores of LeaveOneOut and the cosine of each sample's
// code to its class sum less itself (and the other classes' sums),
// checked against a brute force over the codes (Expand) with the sample
// left out, including a class of one sample (whose sum less it is zero:
// it stays out of the pool). The standardization is the pool's mean and standard
// deviation and the threshold keeps Keep of the fused pool values.
//
// Tolerance: S sums n ≤ 40 float32 codes, each entry within n·u
// (u = 2⁻²⁴) relative of the float64 sums; the cosine is a ratio of
// such sums, and is stored in float32: 4·(n+1)·u covers it with margin.
func TestTopCosineCalibration(t *testing.T) {
	ctx := context.Background()
	const d = 12
	cfg := Config{M: 150, P: 6, K: 50, Seed: 5, Lambdas: []float64{1, 10}}
	m, err := New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetCalibration(&reject.Calibration{Score: reject.ScoreTopCosine, Keep: 0.9, MaxSamples: 100}); err != nil {
		t.Fatal(err)
	}
	x, y := clusters(21, 39, d, []int{0, 1, 2}, 0.7)
	// one sample of class 3
	x3, _ := clusters(22, 1, d, []int{3}, 0.7)
	x, y = append(x, x3...), append(y, 3)
	if _, err := m.Learn(ctx, x, y, nil); err != nil {
		t.Fatal(err)
	}
	rej := m.Rejection()
	// class 3's only sample stays out of the pool (left out, its class
	// is unlearned): the 39 others are pooled, in order
	if rej.Score != reject.ScoreTopCosine || rej.Samples != 39 {
		t.Fatalf("rejection %+v, want top+cosine on 39 samples", rej)
	}
	pool := m.calibrationPool()
	if len(pool) != 78 {
		t.Fatalf("pool of %d values, want 39 (top, cosine) pairs", len(pool))
	}
	loo, cls := m.leaveOneOut()
	nc := m.Classes().Len()
	codes, err := m.expandCodes(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	M := cfg.M
	tol := 4 * 41.0 / (1 << 24)
	if len(cls) != 40 {
		t.Fatalf("%d leave-one-out rows, want all 40 samples'", len(cls))
	}
	for i := range 39 {
		if top := float32(reject.ScoreTop.Value(loo[i*nc:(i+1)*nc], 0)); pool[2*i] != top {
			t.Errorf("sample %d: pool top %v, leave-one-out top %v", i, pool[2*i], top)
		}
		want := bruteCosine(codes, y, nc, M, codes[i*M:(i+1)*M], i)
		if got := float64(pool[2*i+1]); math.Abs(got-want) > tol {
			t.Errorf("sample %d (class %d): leave-one-out cosine %.9g, brute force %.9g", i, y[i], got, want)
		}
	}
	top, cos := make([]float64, 39), make([]float64, 39)
	for i := range top {
		top[i], cos[i] = float64(pool[2*i]), float64(pool[2*i+1])
	}
	tm, ts := meanStdRef(top)
	cm, cs := meanStdRef(cos)
	if math.Abs(rej.TopMean-tm) > 1e-12*math.Abs(tm)+1e-15 || math.Abs(rej.TopStd-ts) > 1e-9*ts ||
		math.Abs(rej.CosMean-cm) > 1e-12 || math.Abs(rej.CosStd-cs) > 1e-9*cs {
		t.Fatalf("standardization %+v, want top %g ± %g, cosine %g ± %g", rej, tm, ts, cm, cs)
	}
	fused := make([]float64, 39)
	for i := range fused {
		fused[i] = (top[i]-rej.TopMean)/rej.TopStd + (cos[i]-rej.CosMean)/rej.CosStd
	}
	slices.Sort(fused)
	// the split-conformal threshold: the k-th smallest, k = ⌊α(n+1)⌋ =
	// ⌊0.1·40⌋ = 4 (TestConformalRank)
	if th := fused[4-1]; rej.Threshold != th {
		t.Fatalf("threshold %g, want the 10%% quantile of the fused pool %g", rej.Threshold, th)
	}
}

// meanStdRef is the population mean and standard deviation, written out
// again for the test.
func meanStdRef(v []float64) (float64, float64) {
	s := 0.0
	for _, x := range v {
		s += x
	}
	mean := s / float64(len(v))
	q := 0.0
	for _, x := range v {
		q += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(q / float64(len(v)))
}

// TestScoresCosines: the predictor's cosine of a sample's code to the
// nearest class sum equals the brute force over the codes of the learned
// samples (float64 sums), for learned samples and far-away inputs; the
// scores are Scores' to the bit; Reject decides by the fused value
// computed here from the scores and the brute-force cosine; a far-away
// input is rejected and most learned ones are kept.
//
// Tolerance: as TestTopCosineCalibration for S, plus the float32 dot
// products of the unit rows with m-term sums (m·u): 4·(n+m)·u.
func TestScoresCosines(t *testing.T) {
	ctx := context.Background()
	const d = 12
	cfg := Config{M: 150, P: 6, K: 50, Seed: 6, Lambdas: []float64{1, 10}}
	m, err := New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetCalibration(&reject.Calibration{Score: reject.ScoreTopCosine}); err != nil {
		t.Fatal(err)
	}
	x, y := clusters(31, 60, d, []int{0, 1, 2}, 0.5)
	if _, err := m.Learn(ctx, x, y, nil); err != nil {
		t.Fatal(err)
	}
	far, _ := clusters(32, 10, d, []int{50}, 0.5) // a class the model never saw
	in := append(slices.Clone(x), far...)
	p := m.Predictor()
	sc, cos, err := p.ScoresCosines(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := p.Scores(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sc, plain) || len(cos) != len(in)/d {
		t.Fatal("ScoresCosines' scores differ from Scores'")
	}
	codes, _ := m.expandCodes(ctx, in)
	M, nc, rej := cfg.M, m.Classes().Len(), m.Rejection()
	if !rej.Enabled() || rej.Score != reject.ScoreTopCosine {
		t.Fatalf("rejection %+v", rej)
	}
	tol := 4 * float64(60+M) / (1 << 24)
	farRejected, keptKnown := 0, 0
	for i := range cos {
		want := bruteCosine(codes[:60*M], y, nc, M, codes[i*M:(i+1)*M], -1)
		if math.Abs(cos[i]-want) > tol {
			t.Errorf("input %d: cosine %.9g, brute force %.9g", i, cos[i], want)
		}
		row := sc[i*nc : (i+1)*nc]
		v := (float64(slices.Max(row))-rej.TopMean)/rej.TopStd + (cos[i]-rej.CosMean)/rej.CosStd
		if math.Abs(rej.Value(row, cos[i])-v) > 1e-12*(1+math.Abs(v)) {
			t.Errorf("input %d: value %g, want %g", i, rej.Value(row, cos[i]), v)
		}
		if rej.Reject(row, cos[i]) != (v < rej.Threshold) {
			t.Errorf("input %d: Reject %v at value %g, threshold %g", i, rej.Reject(row, cos[i]), v, rej.Threshold)
		}
		if i >= 60 && rej.Reject(row, cos[i]) {
			farRejected++
		} else if i < 60 && !rej.Reject(row, cos[i]) {
			keptKnown++
		}
	}
	if farRejected != 10 || keptKnown < 50 {
		t.Errorf("far-away inputs rejected: %d of 10; learned inputs kept: %d of 60", farRejected, keptKnown)
	}
	if !rej.Reject(sc[:nc], math.NaN()) {
		t.Error("a NaN cosine (not computed) must reject under top+cosine")
	}
	if v := reject.ScoreTopCosine.Value(sc[:nc], 0); !math.IsNaN(v) {
		t.Errorf("reject.Score.Value of top+cosine without the cosine is %g, want NaN", v)
	}
}

// TestCalibrationPoolKind: the pool holds one value per sample for the
// top score and a (top, cosine) pair for top+cosine; a learn under the
// other kind starts the pool afresh, even while rejection is off (the
// pool then too small: Samples tells which kind it holds), so values of
// two kinds never mix.
func TestCalibrationPoolKind(t *testing.T) {
	ctx := context.Background()
	const d = 10
	m, err := New(Config{M: 90, P: 5, K: 30, Seed: 4, Lambdas: []float64{1}}, d)
	if err != nil {
		t.Fatal(err)
	}
	for step, tc := range []struct {
		score   reject.Score
		samples int // in the pool after the learn of 6
		on      bool
	}{
		{reject.ScoreTopCosine, 6, true}, // on from the first learn
		{reject.ScoreTop, 6, true},       // afresh: the pairs are another kind
		{reject.ScoreTop, 12, true},
		{reject.ScoreTopCosine, 6, true},
		{reject.ScoreTopCosine, 12, true},
	} {
		if err := m.SetCalibration(&reject.Calibration{Score: tc.score, MaxSamples: 50}); err != nil {
			t.Fatal(err)
		}
		x, y := clusters(uint64(40+step), 6, d, []int{0, 1, 2}, 0.6)
		if _, err := m.Learn(ctx, x, y, nil); err != nil {
			t.Fatal(err)
		}
		rej, pool := m.Rejection(), m.calibrationPool()
		if rej.Samples != tc.samples || len(pool) != tc.score.PoolStride()*tc.samples || rej.Enabled() != tc.on || (tc.on && rej.Score != tc.score) {
			t.Fatalf("step %d (%s): rejection %+v with a pool of %d values, want %d samples, on %v", step, tc.score, rej, len(pool), tc.samples, tc.on)
		}
	}
}
