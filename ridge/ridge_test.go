package ridge

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/flycl/flycl/linalg"
)

// classData returns n×m inputs with nc classes: a class mean plus noise,
// scaled like Fly-CL codes (entries of order 10).
func classData(seed uint64, n, m, nc int) ([]float32, []int) {
	r := rand.New(rand.NewPCG(seed, 0))
	means := make([]float64, nc*m)
	for i := range means {
		means[i] = 3 * r.NormFloat64()
	}
	h := make([]float32, n*m)
	labels := make([]int, n)
	for i := 0; i < n; i++ {
		c := r.IntN(nc)
		labels[i] = c
		for j := 0; j < m; j++ {
			h[i*m+j] = float32(means[c*m+j] + 5*r.NormFloat64())
		}
	}
	return h, labels
}

func dense64(h []float32, n, m int) *mat.Dense {
	d := mat.NewDense(n, m, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			d.Set(i, j, float64(h[i*m+j]))
		}
	}
	return d
}

func oneHot(labels []int, nc int) *mat.Dense {
	y := mat.NewDense(len(labels), nc, nil)
	for i, l := range labels {
		y.Set(i, l, 1)
	}
	return y
}

// TestSolveMatchesFloat64 streams three batches and compares C with a
// brute-force float64 solve of (ΣHᵀH + λI) C = ΣHᵀY. float32 Cholesky on a
// matrix of condition ~1e3 loses about 1e-4 relative.
func TestSolveMatchesFloat64(t *testing.T) {
	const m, nc = 40, 5
	acc, _ := NewAccumulator(m)
	var all *mat.Dense
	var allLabels []int
	for b, n := range []int{30, 1, 55} {
		h, labels := classData(uint64(b+1), n, m, nc)
		if err := acc.Add(h, n, labels); err != nil {
			t.Fatal(err)
		}
		d := dense64(h, n, m)
		if all == nil {
			all = d
		} else {
			var s mat.Dense
			s.Stack(all, d)
			all = &s
		}
		allLabels = append(allLabels, labels...)
	}
	const lambda = 500.0
	var g mat.Dense
	g.Mul(all.T(), all)
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			if got := float64(acc.G(i, j)); math.Abs(got-g.At(i, j)) > 1e-5*math.Abs(g.At(i, i)) {
				t.Fatalf("G[%d,%d]=%g want %g", i, j, got, g.At(i, j))
			}
		}
		g.Set(i, i, g.At(i, i)+lambda)
	}
	var s, want mat.Dense
	s.Mul(all.T(), oneHot(allLabels, nc))
	if err := want.Solve(&g, &s); err != nil {
		t.Fatal(err)
	}
	for rep := 0; rep < 2; rep++ { // a second solve must see G intact
		c, err := acc.Solve(context.Background(), lambda)
		if err != nil {
			t.Fatal(err)
		}
		scale := mat.Norm(&want, math.Inf(1))
		for cl := 0; cl < nc; cl++ {
			for j := 0; j < m; j++ {
				if d := math.Abs(float64(c[cl*m+j]) - want.At(j, cl)); d > 1e-4*scale {
					t.Fatalf("solve %d: C[%d,%d]=%g want %g", rep, cl, j, c[cl*m+j], want.At(j, cl))
				}
			}
		}
	}
	if acc.Samples() != 86 || acc.Classes() != nc {
		t.Errorf("samples %d classes %d", acc.Samples(), acc.Classes())
	}
}

func TestAccumulatorErrors(t *testing.T) {
	if _, err := NewAccumulator(0); err == nil {
		t.Error("m=0: no error")
	}
	acc, _ := NewAccumulator(3)
	if err := acc.Add(make([]float32, 5), 2, []int{0, 1}); err == nil {
		t.Error("wrong size: no error")
	}
	if err := acc.Add(make([]float32, 6), 2, []int{0}); err == nil {
		t.Error("label count: no error")
	}
	if err := acc.Add(make([]float32, 3), 1, []int{-1}); err == nil {
		t.Error("negative label: no error")
	}
	if _, err := acc.Solve(context.Background(), 0); err == nil {
		t.Error("lambda 0: no error")
	}
}

// gcvSVD is the definition, computed from an explicit thin SVD in float64
// (svdGCV).
func gcvSVD(t *testing.T, h []float32, n, m int, labels []int, nc int, grid []float64) []float64 {
	scores, _, _ := svdGCV(t, h, n, m, labels, nc, grid)
	return scores
}

// TestGCVMatchesSVD checks every method against the SVD definition, on
// tasks wider than tall (dual is the fast path), taller than wide (primal)
// and square, over a grid from under- to over-regularised.
//
// The tolerance is derived from the conditioning, not fitted: a method that
// factors K + λI or G + λI in precision u makes relative errors of about
// u·κ(λ) per rounding, κ(λ) = (s²max + λ)/λ bounding the condition number of
// either system, and the errors of the length-d dot products behind the
// Gram matrix and the triangular solves grow like √d (d = max(n, m)); we
// allow 4·√d·u·κ(λ). The float64 primal form used when n < m subtracts the
// m − n null-space directions of G from λ·tr (G + λI)⁻¹ (see GCVGram): its
// error is amplified by m/(n − df), so its tolerance carries that factor.
// Measured worst cases (OpenBLAS unset, Haswell and 1 thread): 1.4·u·κ for
// float32 methods, 0.6·√d·u·κ·m/(n−df) for the float64 primal.
func TestGCVMatchesSVD(t *testing.T) {
	grid := []float64{1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7}
	const u32, u64 = 0x1p-24, 0x1p-53
	for _, tc := range []struct{ n, m, nc int }{{60, 150, 4}, {150, 60, 6}, {80, 80, 3}, {7, 200, 7}} {
		h, labels := classData(uint64(tc.n*1000+tc.m), tc.n, tc.m, tc.nc)
		want := gcvSVD(t, h, tc.n, tc.m, labels, tc.nc, grid)
		var svd mat.SVD
		if !svd.Factorize(dense64(h, tc.n, tc.m), mat.SVDNone) {
			t.Fatal("SVD failed")
		}
		s := svd.Values(nil)
		sqrtD := math.Sqrt(float64(max(tc.n, tc.m)))
		for _, method := range []GCVMethod{GCVDual, GCVPrimal, GCVEigen, GCVBand, GCVAuto} {
			if method == GCVBand && !linalg.HaveBandReduction {
				continue
			}
			got, err := GCV(context.Background(), h, tc.n, tc.m, labels, tc.nc, grid, method)
			if err != nil {
				t.Fatalf("%+v %v: %v", tc, method, err)
			}
			for i, lambda := range grid {
				kappa := (s[0]*s[0] + lambda) / lambda
				tol := 4 * sqrtD * u32 * kappa
				if method.Resolve(tc.n, tc.m, len(grid)) == GCVPrimal && tc.n < tc.m {
					nMinusDF := 0.0 // Σ λ/(s²+λ) over the n singular values
					for _, v := range s {
						nMinusDF += lambda / (v*v + lambda)
					}
					tol = 4 * sqrtD * u64 * kappa * float64(tc.m) / nMinusDF
				}
				if rel := math.Abs(got[i]-want[i]) / want[i]; rel > tol {
					t.Errorf("%+v %v lambda=%g: GCV %.9g want %.9g (rel %.1e > tol %.1e)", tc, method, lambda, got[i], want[i], rel, tol)
				}
			}
			if b, wb := BestLambda(got), BestLambda(want); b != wb {
				t.Errorf("%+v %v: best lambda index %d want %d", tc, method, b, wb)
			}
		}
	}
}

// TestGCVGramMatchesDual checks the statistics-only form against the dual
// form on the same task, and that it leaves g's lower triangle and
// diagonal as it found them (callers reuse their Gram matrix).
func TestGCVGramMatchesDual(t *testing.T) {
	const n, m, nc = 40, 90, 5
	h, labels := classData(7, n, m, nc)
	grid := []float64{1e2, 1e4, 1e6}
	g := make([]float64, m*m)
	z := make([]float64, nc*m)
	for i := 0; i < n; i++ {
		for a := 0; a < m; a++ {
			z[labels[i]*m+a] += float64(h[i*m+a])
			for b := 0; b <= a; b++ {
				g[a*m+b] += float64(h[i*m+a]) * float64(h[i*m+b])
			}
		}
	}
	lower := make([]float64, 0, m*(m+1)/2)
	for a := 0; a < m; a++ {
		lower = append(lower, g[a*m:a*m+a+1]...)
	}
	got, err := GCVGram(context.Background(), g, m, z, nc, n, n, grid)
	if err != nil {
		t.Fatal(err)
	}
	want := gcvSVD(t, h, n, m, labels, nc, grid)
	for i := range grid {
		if rel := math.Abs(got[i]-want[i]) / want[i]; rel > 1e-8 {
			t.Errorf("lambda=%g: GCVGram %.12g, SVD %.12g (rel %.1e)", grid[i], got[i], want[i], rel)
		}
	}
	k := 0
	for a := 0; a < m; a++ {
		for b := 0; b <= a; b++ {
			if g[a*m+b] != lower[k] {
				t.Fatalf("g[%d][%d] changed from %g to %g", a, b, lower[k], g[a*m+b])
			}
			k++
		}
	}
	for name, f := range map[string]func() error{
		"n=0":      func() error { _, err := GCVGram(context.Background(), g, m, z, nc, n, 0, grid); return err },
		"short g":  func() error { _, err := GCVGram(context.Background(), g[1:], m, z, nc, n, n, grid); return err },
		"short z":  func() error { _, err := GCVGram(context.Background(), g, m, z[1:], nc, n, n, grid); return err },
		"no grid":  func() error { _, err := GCVGram(context.Background(), g, m, z, nc, n, n, nil); return err },
		"lambda<0": func() error { _, err := GCVGram(context.Background(), g, m, z, nc, n, n, []float64{-1}); return err },
		"yty=NaN":  func() error { _, err := GCVGram(context.Background(), g, m, z, nc, math.NaN(), n, grid); return err },
	} {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestBestLambdaFirstMinimum(t *testing.T) {
	for _, tc := range []struct {
		s    []float64
		want int
	}{{[]float64{3, 1, 1, 2}, 1}, {[]float64{1}, 0}, {[]float64{math.NaN(), 2, 1}, 2}, {[]float64{5, 4, 3}, 2}} {
		if got := BestLambda(tc.s); got != tc.want {
			t.Errorf("BestLambda(%v)=%d want %d", tc.s, got, tc.want)
		}
	}
}

func TestGCVErrors(t *testing.T) {
	ctx := context.Background()
	h, labels := classData(1, 4, 3, 2)
	for name, f := range map[string]func() error{
		"empty":      func() error { _, err := GCV(ctx, nil, 0, 3, nil, 1, []float64{1}, GCVAuto); return err },
		"size":       func() error { _, err := GCV(ctx, h[:5], 4, 3, labels, 2, []float64{1}, GCVAuto); return err },
		"no grid":    func() error { _, err := GCV(ctx, h, 4, 3, labels, 2, nil, GCVAuto); return err },
		"bad lambda": func() error { _, err := GCV(ctx, h, 4, 3, labels, 2, []float64{-1}, GCVAuto); return err },
		"label":      func() error { _, err := GCV(ctx, h, 4, 3, []int{0, 1, 2, 0}, 2, []float64{1}, GCVAuto); return err },
	} {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestGCVBandGrids checks the band method where the reduction has several
// panels (n > BandWidth), for n < m, n = m and n > m and grids of 1, 4, 10
// and 17 values, against the SVD definition with the tolerance of
// TestGCVMatchesSVD (4·√d·u·κ(λ), float32 Gram and reduction): same values
// within it, same argmin.
func TestGCVBandGrids(t *testing.T) {
	if !linalg.HaveBandReduction {
		t.Skip("pure-Go backend: no band reduction")
	}
	logspace := func(k int) []float64 {
		g := make([]float64, k)
		for i := range g {
			g[i] = math.Pow(10, 1+6*float64(i)/float64(max(k-1, 1)))
		}
		return g
	}
	const u32 = 0x1p-24
	for _, tc := range []struct{ n, m, nc int }{{200, 320, 5}, {260, 260, 4}, {300, 200, 6}} {
		h, labels := classData(uint64(tc.n*7+tc.m), tc.n, tc.m, tc.nc)
		var svd mat.SVD
		if !svd.Factorize(dense64(h, tc.n, tc.m), mat.SVDNone) {
			t.Fatal("SVD failed")
		}
		s2max := svd.Values(nil)[0]
		s2max *= s2max
		sqrtD := math.Sqrt(float64(max(tc.n, tc.m)))
		var all []float64 // every grid at once: one SVD per case
		for _, k := range []int{1, 4, 10, 17} {
			all = append(all, logspace(k)...)
		}
		wantAll := gcvSVD(t, h, tc.n, tc.m, labels, tc.nc, all)
		for _, k := range []int{1, 4, 10, 17} {
			grid := logspace(k)
			want := wantAll[:k]
			wantAll = wantAll[k:]
			got, err := GCV(context.Background(), h, tc.n, tc.m, labels, tc.nc, grid, GCVBand)
			if err != nil {
				t.Fatal(err)
			}
			for i, lambda := range grid {
				tol := 4 * sqrtD * u32 * (s2max + lambda) / lambda
				if rel := math.Abs(got[i]-want[i]) / want[i]; rel > tol {
					t.Errorf("%+v grid %d, lambda=%g: GCV %.9g want %.9g (rel %.1e > %.1e)", tc, k, lambda, got[i], want[i], rel, tol)
				}
			}
			if b, wb := BestLambda(got), BestLambda(want); b != wb {
				t.Errorf("%+v grid %d: best index %d want %d", tc, k, b, wb)
			}
		}
	}
}

// rankDeficient returns n×m codes of rank r < n (like raw pixels mapped by
// a random projection: every row a combination of r patterns, around a
// common mean, as non-negative pixels have one), with labels from a noisy
// linear rule on the combination weights.
func rankDeficient(seed uint64, n, m, r, nc int) ([]float32, []int) {
	rr := rand.New(rand.NewPCG(seed, 11))
	a := make([]float64, n*r)
	for i := range a {
		a[i] = rr.NormFloat64() + 2
	}
	p := make([]float64, r*m)
	for i := range p {
		p[i] = rr.NormFloat64()
	}
	h := make([]float32, n*m)
	row := make([]float64, m)
	labels := make([]int, n)
	for i := 0; i < n; i++ {
		clear(row)
		for k := 0; k < r; k++ {
			for j := range row {
				row[j] += a[i*r+k] * p[k*m+j]
			}
		}
		for j, v := range row {
			h[i*m+j] = float32(v)
		}
		// class: the largest of nc fixed linear scores of the weights
		best := math.Inf(-1)
		for c := 0; c < nc; c++ {
			var sc float64
			for k := 0; k < r; k++ {
				sc += a[i*r+k] * math.Sin(float64(1+c*r+k))
			}
			if sc > best {
				best, labels[i] = sc, c
			}
		}
	}
	return h, labels
}

// TestGCVBandRankDeficient checks the band method where small λ are not
// determinable from the float32 K: codes of rank r < n (as raw MNIST
// pixels give), and a grid reaching far below the rounding noise of K
// (u32·‖K‖₂). There the band method must give +Inf (so a meaningless
// score cannot be chosen), pick the λ the dual method picks, and agree
// with the float64 SVD definition wherever it gives a score: within the
// conditioning tolerance 4·√d·u32·κ(λ) of TestGCVMatchesSVD, and the same
// argmin over the λ it scores. Without the floor (factor 0) the band
// method scores some of the excluded λ (so the floor is what excludes
// them); those scores are off the SVD's by up to 1%, enough to be chosen
// where the GCV curve is flat at small λ (as on MNIST pixels, where its
// scores differ by 10⁻⁶ below λ = 100).
func TestGCVBandRankDeficient(t *testing.T) {
	if !linalg.HaveBandReduction {
		t.Skip("pure-Go backend: no band reduction")
	}
	const u32 = 0x1p-24
	for _, tc := range []struct{ n, m, r, nc int }{{300, 500, 40, 3}, {400, 400, 120, 4}} {
		h, labels := rankDeficient(uint64(tc.n+tc.r), tc.n, tc.m, tc.r, tc.nc)
		var svd mat.SVD
		if !svd.Factorize(dense64(h, tc.n, tc.m), mat.SVDNone) {
			t.Fatal("SVD failed")
		}
		s2max := svd.Values(nil)[0]
		s2max *= s2max
		// grid: 3 values per decade from 1e-9·‖K‖ to 1e-1·‖K‖
		var grid []float64
		for e := -9.0; e <= -1; e += 1.0 / 3 {
			grid = append(grid, s2max*math.Pow(10, e))
		}
		want := gcvSVD(t, h, tc.n, tc.m, labels, tc.nc, grid)
		band, err := GCV(context.Background(), h, tc.n, tc.m, labels, tc.nc, grid, GCVBand)
		if err != nil {
			t.Fatal(err)
		}
		dual, err := GCV(context.Background(), h, tc.n, tc.m, labels, tc.nc, grid, GCVDual)
		if err != nil {
			t.Fatal(err)
		}
		var scored []float64 // SVD scores where band scores, +Inf elsewhere
		sqrtD := math.Sqrt(float64(max(tc.n, tc.m)))
		excluded := 0
		for i, lambda := range grid {
			if math.IsInf(band[i], 1) {
				scored = append(scored, math.Inf(1))
				excluded++
				if lambda > bandNoiseFloor*u32*s2max*2 {
					t.Errorf("%+v: λ=%.3g (%.1f u32‖K‖) excluded, above twice the floor", tc, lambda, lambda/(u32*s2max))
				}
				continue
			}
			scored = append(scored, want[i])
			tol := 4 * sqrtD * u32 * (s2max + lambda) / lambda
			if rel := math.Abs(band[i]-want[i]) / want[i]; rel > tol {
				t.Errorf("%+v λ=%.3g: band %.9g want %.9g (rel %.1e > %.1e)", tc, lambda, band[i], want[i], rel, tol)
			}
		}
		if excluded == 0 || excluded == len(grid) {
			t.Fatalf("%+v: %d of %d λ excluded; the grid must straddle the floor", tc, excluded, len(grid))
		}
		b := BestLambda(band)
		if d := BestLambda(dual); b != d {
			t.Errorf("%+v: band picks λ=%.3g, dual %.3g", tc, grid[b], grid[d])
		}
		if w := BestLambda(scored); b != w {
			t.Errorf("%+v: band picks λ=%.3g, SVD over the scored λ %.3g", tc, grid[b], grid[w])
		}
		raw, err := gcvBandFloor(context.Background(), make([]float32, tc.n*tc.n), h, tc.n, tc.m, labels, tc.nc, grid, 0)
		if err != nil {
			t.Fatal(err)
		}
		noise := 0 // λ the floor excludes that the band would score without it
		for i := range grid {
			if math.IsInf(band[i], 1) && !math.IsInf(raw[i], 1) {
				noise++
			}
		}
		// a grid wholly below the floor is an error, not a meaningless choice
		if _, err := GCV(context.Background(), h, tc.n, tc.m, labels, tc.nc, grid[:3], GCVBand); err == nil {
			t.Errorf("%+v: no error for a grid of λ ≤ %.3g, all below the floor", tc, grid[2])
		}
		if noise == 0 {
			t.Errorf("%+v: without the floor band scores no λ more: the test does not exercise the floor", tc)
		} else {
			t.Logf("%+v: %d λ excluded, %d of them by the floor; picks %.3g (%.0f u32‖K‖)", tc, excluded, noise, grid[b], grid[b]/(u32*s2max))
		}
	}
}

// TestResolveAuto checks the rule GCVAuto documents: primal when n > m;
// for n <= m the band method from BandGridMin grid values (with OpenBLAS,
// n > BandMinSamples), else dual, or eigen for long grids.
func TestResolveAuto(t *testing.T) {
	bandOr := func(alt GCVMethod) GCVMethod {
		if linalg.HaveBandReduction {
			return GCVBand
		}
		return alt
	}
	for _, tc := range []struct {
		n, m, grid int
		want       GCVMethod
	}{
		{5000, 4000, 10, GCVPrimal},
		{5000, 10000, BandGridMin - 1, GCVDual},
		{5000, 10000, BandGridMin, bandOr(GCVDual)},
		{10000, 10000, 6, bandOr(GCVDual)},
		{BandMinSamples + 1, 10000, 17, bandOr(GCVEigen)},
		{BandMinSamples, 10000, 17, GCVEigen},
		{BandMinSamples, 10000, 12, GCVDual},
		{600, 10000, 4, GCVDual},
		{BandWidth, 10000, 10, GCVDual},
	} {
		if got := GCVAuto.Resolve(tc.n, tc.m, tc.grid); got != tc.want {
			t.Errorf("Resolve(n=%d, m=%d, grid=%d) = %v, want %v", tc.n, tc.m, tc.grid, got, tc.want)
		}
		if got := GCVDual.Resolve(tc.n, tc.m, tc.grid); got != GCVDual {
			t.Errorf("an explicit method resolved to %v", got)
		}
	}
}

// TestTaskGramShared checks the one pass over the codes that the band
// method allows when n >= m: the Gram matrix its GCV formed
// (Workspace.TaskGram), added by Accumulator.AddWithGram, gives the
// statistics Add gives, against the float64 Gram of the same codes
// (tolerance: float32 sums of n products, 4·√n·u32 of the largest
// entry, plus one rounding of the running G). It also checks that
// TaskGram is refused for other codes and after a method that does not
// form the Gram.
func TestTaskGramShared(t *testing.T) {
	if !linalg.HaveBandReduction {
		t.Skip("pure-Go backend: no band reduction")
	}
	const n, m, nc = 300, 200, 4
	const u32 = 0x1p-24
	h1, l1 := classData(5, 150, m, nc)
	h2, l2 := classData(6, n, m, nc)
	grid := []float64{1e2, 1e3, 1e4, 1e5}
	var ws Workspace
	if _, err := ws.GCV(context.Background(), h2, n, m, l2, nc, grid, GCVBand); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := ws.TaskGram(h1, 150, m); ok {
		t.Fatal("TaskGram accepted other codes")
	}
	lower, diag, ok := ws.TaskGram(h2, n, m)
	if !ok {
		t.Fatal("no task Gram after the band method with n >= m")
	}
	shared, _ := NewAccumulator(m)
	plain, _ := NewAccumulator(m)
	for _, a := range []*Accumulator{shared, plain} {
		if err := a.Add(h1, 150, l1); err != nil {
			t.Fatal(err)
		}
	}
	if err := shared.AddWithGram(h2, n, l2, lower, diag); err != nil {
		t.Fatal(err)
	}
	if err := plain.Add(h2, n, l2); err != nil {
		t.Fatal(err)
	}
	want := make([]float64, m*m) // float64 Gram of both tasks
	maxG := 0.0
	for _, hh := range []struct {
		h []float32
		n int
	}{{h1, 150}, {h2, n}} {
		for i := 0; i < hh.n; i++ {
			r := hh.h[i*m : (i+1)*m]
			for a := 0; a < m; a++ {
				for b := 0; b <= a; b++ {
					want[a*m+b] += float64(r[a]) * float64(r[b])
				}
			}
		}
	}
	for a := 0; a < m; a++ {
		maxG = max(maxG, want[a*m+a])
	}
	tol := 4 * math.Sqrt(float64(n+150)) * u32 * maxG
	for a := 0; a < m; a++ {
		for b := 0; b <= a; b++ {
			for name, acc := range map[string]*Accumulator{"AddWithGram": shared, "Add": plain} {
				if d := math.Abs(float64(acc.G(a, b)) - want[a*m+b]); d > tol {
					t.Fatalf("%s: G[%d][%d] = %g, float64 %g (|d| %.2g > %.2g)", name, a, b, acc.G(a, b), want[a*m+b], d, tol)
				}
			}
		}
	}
	if shared.Samples() != plain.Samples() || !slices.Equal(shared.S(), plain.S()) {
		t.Fatal("AddWithGram and Add disagree on S or the sample count")
	}
	if err := shared.AddWithGram(h2, n, l2, lower[1:], diag); err == nil {
		t.Fatal("AddWithGram accepted a short Gram")
	}
	if _, err := ws.GCV(context.Background(), h2, n, m, l2, nc, grid, GCVDual); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := ws.TaskGram(h2, n, m); ok {
		t.Fatal("TaskGram after the dual method")
	}
}
