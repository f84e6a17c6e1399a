package flycl

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/flycl/flycl/reject"
	"gonum.org/v1/gonum/mat"
)

// TestJackknifeExtrapolateBruteForce: the extrapolated leave-one-out class
// scores and cosines of a calibrated learn equal an independent brute
// force in float64 (a ridge classifier solved again without sample i, and
// again without samples i and j, for every other sample j of i's class;
// the class sums summed again without them), and the model's temperature
// is the one fitted on the brute force's extrapolated rows, not on the
// exact leave-one-out rows (which give a clearly different one).
//
// Tolerance: as TestLeaveOneOutScoresExact, float32 solves lose about
// (κ + m)·u relative (u = 2⁻²⁴); the rank-two downdate divides by
// det = (1−a_ii)(1−a_jj) − a_ij², which magnifies by at most 1/det_min.
// The test uses 16·(κ + m)·u/det_min times the largest score (measured
// from the brute force). The temperature is then a minimiser of a smooth
// function of rows known to that accuracy: a relative 1e-3.
func TestJackknifeExtrapolateBruteForce(t *testing.T) {
	ctx := context.Background()
	const d, lambda, per = 12, 1000.0, 4
	cfg := Config{M: 80, P: 5, K: 30, Seed: 5, Lambdas: []float64{lambda}}
	m, err := New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetCalibration(&reject.Calibration{Score: reject.ScoreTop}); err != nil {
		t.Fatal(err)
	}
	x, y := clusters(3, 3*per, d, []int{0, 1, 2}, 1.2)
	if _, err := m.Learn(ctx, x, y, &LearnOptions{Lambda: lambda}); err != nil {
		t.Fatal(err)
	}
	nc, M, n := m.Classes().Len(), cfg.M, len(y)
	loo, cls := m.leaveOneOut()
	if len(cls) != n || nc != 3 {
		t.Fatalf("%d leave-one-out rows of %d classes, want %d of 3", len(cls), nc, n)
	}
	codes, err := m.expandCodes(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	// the model's extrapolation, through its own path
	sel := reject.CalibrationSamples(n, n)
	lo, full, lev, err := m.looScores(ctx, codes, sel, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	cos := reject.LeaveOneOutCosines(m.acc.S(), nc, M, codes, sel, y)
	got, gotCos, err := reject.Jackknife(ctx, lo, full, lev, cos, nc, M, codes, sel, y, m.acc.S(), m.Classes().Counts(), func(pj []int) []float64 {
		return m.hatColumns(codes, sel, pj, nil)
	})
	if err != nil {
		t.Fatal(err)
	}

	// brute force: scores of x_i by ridge solved on the samples not in out
	hv := func(i int) []float64 { return f64(codes[i*M : (i+1)*M]) }
	solveScore := func(i int, out ...int) []float64 {
		G := mat.NewSymDense(M, nil)
		S := mat.NewDense(M, nc, nil)
		for r := 0; r < n; r++ {
			if slices.Contains(out, r) {
				continue
			}
			v := mat.NewVecDense(M, hv(r))
			G.SymRankOne(G, 1, v)
			for c := 0; c < M; c++ {
				S.Set(c, y[r], S.At(c, y[r])+v.AtVec(c))
			}
		}
		for c := 0; c < M; c++ {
			G.SetSym(c, c, G.At(c, c)+lambda)
		}
		var ch mat.Cholesky
		if !ch.Factorize(G) {
			t.Fatal("brute force: G + λI not positive definite")
		}
		var C mat.Dense
		if err := ch.SolveTo(&C, S); err != nil {
			t.Fatal(err)
		}
		var f mat.VecDense
		f.MulVec(C.T(), mat.NewVecDense(M, hv(i)))
		return f.RawVector().Data
	}
	cosine := func(i int, out ...int) float64 {
		best := math.Inf(-1)
		xi := hv(i)
		for c := 0; c < nc; c++ {
			sum := make([]float64, M)
			for r := 0; r < n; r++ {
				if y[r] == c && !slices.Contains(out, r) {
					for t, v := range hv(r) {
						sum[t] += v
					}
				}
			}
			var num, ss, xx float64
			for t := range sum {
				num += sum[t] * xi[t]
				ss += sum[t] * sum[t]
				xx += xi[t] * xi[t]
			}
			if ss > 0 {
				best = max(best, num/math.Sqrt(ss*xx))
			}
		}
		return best
	}
	want := make([]float64, n*nc)
	wantCos := make([]float64, n)
	maxScore, detMin := 0.0, 1.0
	for i := 0; i < n; i++ {
		one := solveScore(i, i)
		c1 := cosine(i, i)
		delta := make([]float64, nc)
		var dc float64
		k := 0
		for j := 0; j < n; j++ {
			if j == i || y[j] != y[i] {
				continue
			}
			two := solveScore(i, i, j)
			for c := range delta {
				delta[c] += one[c] - two[c]
			}
			dc += c1 - cosine(i, i, j)
			k++
		}
		for c := range delta {
			want[i*nc+c] = one[c] + delta[c]/float64(k)
			maxScore = max(maxScore, math.Abs(want[i*nc+c]))
		}
		wantCos[i] = c1 + dc/float64(k)
		for j := 0; j < n; j++ {
			if j != i {
				// det ≥ 1 − a_ii − a_jj, since a_ij² ≤ a_ii·a_jj (H is
				// positive semidefinite)
				detMin = min(detMin, (1-lev[i])*(1-lev[j])-lev[i]*lev[j])
			}
		}
	}
	if !(detMin > 0) {
		t.Fatalf("leverages too large for the bound: det_min %g", detMin)
	}
	// κ of G + λI: its largest eigenvalue over λ bounds it
	G := mat.NewSymDense(M, nil)
	for r := 0; r < n; r++ {
		G.SymRankOne(G, 1, mat.NewVecDense(M, hv(r)))
	}
	var eig mat.EigenSym
	if !eig.Factorize(G, false) {
		t.Fatal("eigen decomposition failed")
	}
	ev := eig.Values(nil)
	kappa := (ev[len(ev)-1] + lambda) / lambda
	u := math.Pow(2, -24)
	tol := 16 * (kappa + float64(M)) * u / detMin * maxScore
	moved := 0.0
	for i, w := range want {
		if d := math.Abs(float64(got[i]) - w); !(d <= tol) {
			t.Fatalf("row %d class %d: extrapolated score %g, brute force %g (|Δ| %g > %g)", i/nc, i%nc, got[i], w, d, tol)
		}
		moved = max(moved, math.Abs(w-float64(loo[i])))
	}
	for i, w := range wantCos {
		if d := math.Abs(gotCos[i] - w); !(d <= 1e-4) {
			t.Fatalf("row %d: extrapolated cosine %g, brute force %g", i, gotCos[i], w)
		}
	}
	if !(moved > 100*tol) {
		t.Fatalf("the extrapolation moved the scores by at most %g: too little to test (tolerance %g)", moved, tol)
	}

	// the model's temperature is fitted on the extrapolated rows
	w32 := make([]float32, len(want))
	for i, v := range want {
		w32[i] = float32(v)
	}
	tWant, tLOO := reject.FitTemperature(w32, nc, cls), reject.FitTemperature(loo, nc, cls)
	tGot := m.Rejection().Temperature
	if math.Abs(tWant-tLOO) < 0.05*tWant {
		t.Fatalf("temperatures on extrapolated (%g) and exact (%g) rows too close to tell apart", tWant, tLOO)
	}
	if math.Abs(tGot-tWant) > 1e-3*tWant {
		t.Fatalf("model temperature %g, want %g fitted on the extrapolated rows (the exact leave-one-out rows give %g)", tGot, tWant, tLOO)
	}
	// the threshold stays on the exact leave-one-out scores
	pool := m.calibrationPool()
	for i, v := range pool {
		if want := float32(reject.ScoreTop.Value(loo[i*nc:(i+1)*nc], 0)); v != want {
			t.Fatalf("pool score %d is %g, want the exact leave-one-out top score %g", i, v, want)
		}
	}
}
