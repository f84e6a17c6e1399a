package flycl

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/flycl/flycl/reject"
	"gonum.org/v1/gonum/mat"
)

// TestLeaveOneOutScoresExact: the leave-one-out scores a calibrated learn
// computes through the leverages equal the scores of a ridge classifier
// solved again without the sample, in float64 from the same codes (an
// independent brute force: one full solve per left-out sample). The model
// learns two tasks, so the second task's samples are left out of
// statistics that also hold the first task: the formula is exact for
// any sample in G, not only the task's own Gram matrix. It runs on both
// paths of the second learn: refactoring (leverages by two triangular
// solves a sample) and keeping the factor (leverages from the learn's
// low-rank change, ridge.Accumulator.Leverages).
//
// Tolerance: the model works in float32. A solve of G + λI loses about
// κ·u relative (κ its condition number, u = 2⁻²⁴) and the m-term sums
// about m·u more; the leverage a enters as 1/(1−a), which magnifies by at
// most 1/(1−a_max). The test uses 8·(κ + m)·u/(1−a_max) times the
// largest score, measured from the brute force itself.
func TestLeaveOneOutScoresExact(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(map[bool]string{false: "refactor", true: "kept factor"}[keep], func(t *testing.T) {
			testLeaveOneOutScoresExact(t, keep)
		})
	}
}

func testLeaveOneOutScoresExact(t *testing.T, keep bool) {
	ctx := context.Background()
	const d, lambda = 16, 20.0
	cfg := Config{M: 120, P: 6, K: 40, Seed: 11, Lambdas: []float64{lambda}}
	m, err := New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetCalibration(&reject.Calibration{Score: reject.ScoreTop, MaxSamples: 1000}); err != nil {
		t.Fatal(err)
	}
	m.setUpdateLimit(map[bool]int{false: 0, true: 1000}[keep])
	x1, y1 := clusters(1, 30, d, []int{0, 1}, 0.9)
	x2, y2 := clusters(2, 24, d, []int{2, 3, 4}, 0.9)
	if _, err := m.Learn(ctx, x1, y1, &LearnOptions{Lambda: lambda}); err != nil {
		t.Fatal(err)
	}
	rec, err := m.Learn(ctx, x2, y2, &LearnOptions{Lambda: lambda})
	if err != nil {
		t.Fatal(err)
	}
	if rec.FactorUpdated != keep {
		t.Fatalf("second learn kept the factor: %v, want %v", rec.FactorUpdated, keep)
	}
	loo, cls := m.leaveOneOut()
	nc := m.Classes().Len()
	if nc != 5 || len(cls) != 24 || len(loo) != 24*nc {
		t.Fatalf("leave-one-out of %d samples × %d classes (%d values), want 24 × 5", len(cls), nc, len(loo))
	}
	h1, _ := m.expandCodes(ctx, x1)
	h2, _ := m.expandCodes(ctx, x2)
	M := cfg.M
	codes := append(slices.Clone(h1), h2...)
	labels := append(slices.Clone(y1), y2...) // labels 0..4 are class indices 0..4 here
	n := len(labels)
	// float64 G + λI and S over all samples
	G := mat.NewSymDense(M, nil)
	S := mat.NewDense(M, nc, nil)
	for i := 0; i < n; i++ {
		hv := mat.NewVecDense(M, f64(codes[i*M:(i+1)*M]))
		G.SymRankOne(G, 1, hv)
		for j := 0; j < M; j++ {
			S.Set(j, labels[i], S.At(j, labels[i])+hv.AtVec(j))
		}
	}
	for j := 0; j < M; j++ {
		G.SetSym(j, j, G.At(j, j)+lambda)
	}
	var eig mat.EigenSym
	if !eig.Factorize(G, false) {
		t.Fatal("eigen decomposition failed")
	}
	ev := eig.Values(nil)
	kappa := ev[len(ev)-1] / ev[0]
	maxA, maxScore := 0.0, 0.0
	want := make([]float64, len(loo))
	for r := 0; r < len(cls); r++ {
		i := len(y1) + r // sample r of the second task
		hv := mat.NewVecDense(M, f64(codes[i*M:(i+1)*M]))
		Gi := mat.NewSymDense(M, nil)
		Gi.CopySym(G)
		Gi.SymRankOne(Gi, -1, hv)
		Si := mat.DenseCopyOf(S)
		for j := 0; j < M; j++ {
			Si.Set(j, labels[i], Si.At(j, labels[i])-hv.AtVec(j))
		}
		var ch mat.Cholesky
		if !ch.Factorize(Gi) {
			t.Fatal("brute force: G without the sample is not positive definite")
		}
		var C mat.Dense
		if err := ch.SolveTo(&C, Si); err != nil {
			t.Fatal(err)
		}
		var f mat.VecDense
		f.MulVec(C.T(), hv)
		for c := 0; c < nc; c++ {
			want[r*nc+c] = f.AtVec(c)
			maxScore = max(maxScore, math.Abs(f.AtVec(c)))
		}
		var z mat.VecDense
		if err := ch.SolveVecTo(&z, hv); err != nil {
			t.Fatal(err)
		}
		// leverage in the full G: a = b/(1+b) with b = hᵀ(G−hhᵀ+λI)⁻¹h
		b := mat.Dot(hv, &z)
		maxA = max(maxA, b/(1+b))
		if cls[r] != labels[i] {
			t.Fatalf("sample %d: class %d, want %d", r, cls[r], labels[i])
		}
	}
	u := math.Pow(2, -24)
	tol := 8 * (kappa + float64(M)) * u / (1 - maxA) * maxScore
	worst := 0.0
	for i := range loo {
		worst = max(worst, math.Abs(float64(loo[i])-want[i]))
	}
	t.Logf("κ=%.3g, max leverage %.3f, worst |Δ| %.3g (tolerance %.3g)", kappa, maxA, worst, tol)
	if worst > tol {
		t.Fatalf("leave-one-out scores differ from the brute force by %.3g, more than %.3g", worst, tol)
	}
	// The stored rejection keeps the calibrated share of its pool: these
	// 24 scores, then the 30 of the first task.
	rej, pool := m.Rejection(), m.calibrationPool()
	kept := 0
	for _, v := range pool {
		if float64(v) >= rej.Threshold {
			kept++
		}
	}
	if rej.Score != reject.ScoreTop || rej.Samples != 54 || len(pool) != 54 || float64(kept) < reject.DefaultKeep*54 {
		t.Fatalf("rejection %+v keeps %d of a pool of %d, want at least %.0f%% of 54", rej, kept, len(pool), 100*reject.DefaultKeep)
	}
	for r := range cls {
		if pool[r] != float32(reject.ScoreTop.Value(loo[r*nc:(r+1)*nc], rej.Temperature)) {
			t.Fatalf("pool value %d is %g, the leave-one-out top score %g", r, pool[r], reject.ScoreTop.Value(loo[r*nc:(r+1)*nc], 0))
		}
	}
}

func f64(s []float32) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = float64(v)
	}
	return out
}

// TestRejectionTravels: the rejection is part of the state: a restored
// model and its predictor have it, LearnStats turns it off, and an
// invalid one is refused.
func TestRejectionTravels(t *testing.T) {
	ctx := context.Background()
	const d = 12
	m, err := New(Config{M: 80, P: 5, K: 30, Seed: 2, Lambdas: []float64{1}}, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetCalibration(&reject.Calibration{}); err != nil {
		t.Fatal(err)
	}
	x, y := clusters(3, 40, d, []int{0, 1}, 0.5)
	if _, err := m.Learn(ctx, x, y, nil); err != nil {
		t.Fatal(err)
	}
	rej := m.Rejection()
	if !rej.Enabled() || !(rej.Temperature > 0) || rej.Samples != 40 {
		t.Fatalf("after a calibrated learn: %+v", rej)
	}
	c := m.Clone()
	if c.Rejection() != rej || m.Predictor().Rejection() != rej || m.Snapshot().Predictor().Rejection() != rej {
		t.Fatal("clone, predictor or snapshot lost the rejection")
	}
	st, err := m.TaskStats(ctx, x, y)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Learn(ctx, nil, nil, &LearnOptions{Stats: st}); err != nil {
		t.Fatal(err)
	}
	if c.Rejection().Enabled() {
		t.Fatal("a learn from statistics kept a threshold calibrated without its samples")
	}
	for _, bad := range []reject.Rule{{Score: "median"}, {Threshold: math.NaN()}, {Keep: 2}, {Temperature: -1}} {
		if err := m.SetRejection(bad); err == nil {
			t.Errorf("SetRejection(%+v) accepted", bad)
		}
	}
}

// TestCalibrationPool: small learns pool their leave-one-out scores,
// newest first and at most MaxSamples; rejection stays off until the pool
// holds a sample, then keeps the share asked of the pool (recomputed
// here from each learn's own leave-one-out scores); the pool travels with
// the state, and a learn from statistics empties it.
func TestCalibrationPool(t *testing.T) {
	ctx := context.Background()
	const d = 10
	m, err := New(Config{M: 90, P: 5, K: 30, Seed: 4, Lambdas: []float64{1}}, d)
	if err != nil {
		t.Fatal(err)
	}
	cal := reject.Calibration{Score: reject.ScoreTop, Keep: 0.9, MaxSamples: 12}
	if err := m.SetCalibration(&cal); err != nil {
		t.Fatal(err)
	}
	var want []float32
	for step := 0; step < 5; step++ {
		x, y := clusters(uint64(10+step), 5, d, []int{0, 1, 2}, 0.6)
		if _, err := m.Learn(ctx, x, y, nil); err != nil {
			t.Fatal(err)
		}
		loo, cls := m.leaveOneOut()
		nc := m.Classes().Len()
		rej := m.Rejection()
		// the samples of classes with at least two learned samples (a
		// class's only sample left out is that of an unknown class)
		counts := m.Classes().Counts()
		var fresh []float32
		for i, c := range cls {
			if counts[c] >= 2 {
				fresh = append(fresh, float32(reject.ScoreTop.Value(loo[i*nc:(i+1)*nc], rej.Temperature)))
			}
		}
		if step == 0 && len(fresh) != 4 {
			t.Fatalf("first learn of 2+2+1 samples: %d pooled, want the 4 of the classes of two", len(fresh))
		}
		want = append(fresh, want...)
		if len(want) > cal.MaxSamples {
			want = want[:cal.MaxSamples]
		}
		if got := m.calibrationPool(); !slices.Equal(got, want) {
			t.Fatalf("step %d: pool %v, want %v", step, got, want)
		}
		if enabled := len(want) >= 1; rej.Enabled() != enabled || rej.Samples != len(want) {
			t.Fatalf("step %d: pool of %d, rejection %+v", step, len(want), rej)
		}
		if rej.Enabled() {
			pv := make([]float64, len(want))
			for i, v := range want {
				pv[i] = float64(v)
			}
			if th := reject.KeepThreshold(pv, cal.Keep); rej.Threshold != th {
				t.Fatalf("step %d: threshold %g, want %g", step, rej.Threshold, th)
			}
		}
	}
	st := m.state()
	r, err := m.Snapshot().Model()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.calibrationPool(), want) {
		t.Fatal("the restored model lost its pool")
	}
	c := m.Clone()
	if !slices.Equal(c.calibrationPool(), want) {
		t.Fatal("the clone lost its pool")
	}
	x, y := clusters(99, 9, d, []int{0, 1}, 0.6)
	ts, err := c.TaskStats(ctx, x, y)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Learn(ctx, nil, nil, &LearnOptions{Stats: ts}); err != nil {
		t.Fatal(err)
	}
	if len(c.calibrationPool()) != 0 || c.Rejection().Enabled() {
		t.Fatal("a learn from statistics kept the pool")
	}
	bad := st
	bad.CalibrationPool = []float32{float32(math.Inf(1))}
	if err := bad.validate(m.w); err == nil {
		t.Error("a pool with an infinite score validated")
	}
}
