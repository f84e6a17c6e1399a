package openset

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/features"
)

// TestAUROCPairs: AUROC equals the share of (known, unknown) pairs in
// which the known sample scores higher, ties counting half, counted pair
// by pair.
func TestAUROCPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range [][2]int{{1, 1}, {5, 3}, {40, 70}} {
		k, u := make([]float64, n[0]), make([]float64, n[1])
		for i := range k {
			k[i] = math.Round(r.NormFloat64()*3+1) / 2 // ties
		}
		for i := range u {
			u[i] = math.Round(r.NormFloat64()*3) / 2
		}
		want := 0.0
		for _, a := range k {
			for _, b := range u {
				switch {
				case a > b:
					want++
				case a == b:
					want += 0.5
				}
			}
		}
		want /= float64(len(k) * len(u))
		if got := AUROC(k, u); math.Abs(got-want) > 1e-12 {
			t.Errorf("%v: AUROC %g, pair count %g", n, got, want)
		}
	}
}

// TestECE on confidences worked by hand: two bins, one over-confident.
func TestECE(t *testing.T) {
	conf := []float64{0.9, 0.9, 0.9, 0.9, 0.3, 0.3}
	correct := []bool{true, true, false, false, true, false}
	// bin 0.9: accuracy 0.5, confidence 0.9 → 4/6·0.4; bin 0.3: 0.5 vs 0.3 → 2/6·0.2
	if got, want := ECE(conf, correct, 10), 4.0/6*0.4+2.0/6*0.2; math.Abs(got-want) > 1e-12 {
		t.Errorf("ECE %g, want %g", got, want)
	}
}

// TestGaussianStreaming: statistics added in parts, merged, and with a
// class forgotten give the Mahalanobis scores of a direct computation
// from the remaining samples (class means, shared covariance, its
// shrinkage and inverse with gonum, one distance at a time). Tolerance:
// float64 sums of a few hundred terms of order 10, well conditioned
// (shrink 0.1): 1e-8 relative.
func TestGaussianStreaming(t *testing.T) {
	const d = 6
	r := rand.New(rand.NewPCG(3, 4))
	draw := func(n int, classes []int) ([]float32, []int) {
		x := make([]float32, n*d)
		y := make([]int, n)
		for i := range y {
			y[i] = classes[i%len(classes)]
			for j := 0; j < d; j++ {
				x[i*d+j] = float32(r.NormFloat64() + float64(y[i]*(j%3)))
			}
		}
		return x, y
	}
	x1, y1 := draw(60, []int{0, 1})
	x2, y2 := draw(45, []int{1, 2})
	x3, y3 := draw(30, []int{3})
	a, b := NewGaussian(d), NewGaussian(d)
	if err := a.Add(x1, y1); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(x2, y2); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(x3, y3); err != nil {
		t.Fatal(err)
	}
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	if err := a.Forget(3, x3); err != nil {
		t.Fatal(err)
	}
	if err := a.Forget(2, x3[:d]); err == nil {
		t.Error("forgetting a class with the wrong number of samples: accepted")
	}
	const shrink = 0.1
	mh, err := a.Fit(shrink)
	if err != nil {
		t.Fatal(err)
	}
	// direct computation over the remaining samples
	xs := append(append([]float32{}, x1...), x2...)
	ys := append(append([]int{}, y1...), y2...)
	n := len(ys)
	means := map[int][]float64{}
	cnt := map[int]int{}
	for i, l := range ys {
		if means[l] == nil {
			means[l] = make([]float64, d)
		}
		for j := 0; j < d; j++ {
			means[l][j] += float64(xs[i*d+j])
		}
		cnt[l]++
	}
	for l := range means {
		for j := range means[l] {
			means[l][j] /= float64(cnt[l])
		}
	}
	cov := mat.NewSymDense(d, nil)
	for i, l := range ys {
		v := make([]float64, d)
		for j := range v {
			v[j] = float64(xs[i*d+j]) - means[l][j]
		}
		cov.SymRankOne(cov, 1/float64(n), mat.NewVecDense(d, v))
	}
	tr := mat.Trace(cov)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := (1 - shrink) * cov.At(i, j)
			if i == j {
				v += shrink * tr / d
			}
			cov.SetSym(i, j, v)
		}
	}
	var inv mat.Dense
	if err := inv.Inverse(cov); err != nil {
		t.Fatal(err)
	}
	test, _ := draw(10, []int{0, 1, 2, 3})
	got := mh.Scores(test, d)
	for i := range got {
		best := math.Inf(1)
		for _, mu := range means {
			v := make([]float64, d)
			for j := range v {
				v[j] = float64(test[i*d+j]) - mu[j]
			}
			dv := mat.NewVecDense(d, v)
			var pv mat.VecDense
			pv.MulVec(&inv, dv)
			best = min(best, mat.Dot(dv, &pv))
		}
		if math.Abs(got[i]+best) > 1e-8*math.Max(1, best) {
			t.Errorf("sample %d: score %g, direct −%g", i, got[i], best)
		}
	}
}

// TestRunSeparates: on synthetic features whose classes are clusters in
// different directions, every score tells the learned classes from the
// others almost perfectly, the model's calibrated threshold keeps about
// its share of known test samples, and the table names every score.
func TestRunSeparates(t *testing.T) {
	const d, per = 10, 40
	r := rand.New(rand.NewPCG(5, 6))
	set := func(n int) *features.Set {
		s := &features.Set{D: d}
		for c := 0; c < 6; c++ {
			for i := 0; i < n; i++ {
				for j := 0; j < d; j++ {
					v := r.NormFloat64() * 0.3
					if j == c {
						v += 3
					}
					s.X = append(s.X, float32(v))
				}
				s.Labels = append(s.Labels, c)
				s.N++
			}
		}
		return s
	}
	cfg := Config{Model: flycl.Config{M: 200, P: 4, K: 60, Lambdas: []float64{0.1, 1, 10}}, Splits: 2, Seeds: []uint64{1}, Tasks: 3}
	res, err := Run(context.Background(), []Set{{Name: "synthetic", Train: set(per), Test: set(per)}}, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2*len(Scores) || len(res.Calib) != 2 {
		t.Fatalf("%d rows, %d calibration rows", len(res.Rows), len(res.Calib))
	}
	for _, row := range res.Rows {
		if row.AUROC.Mean < 0.95 {
			t.Errorf("%s %s: AUROC %.3f on well separated clusters", row.Protocol, row.Score, row.AUROC.Mean)
		}
		_, ok := ridgeScore(row.Score)
		ok = ok || strings.HasPrefix(row.Score, "cosine NCM (") || strings.HasPrefix(row.Score, "top + cosine NCM")
		if ok && (row.Kept.Mean < 0.85 || row.Rejected.Mean < 0.9) {
			t.Errorf("%s %s: calibrated threshold keeps %.3f of known, rejects %.3f of unknown", row.Protocol, row.Score, row.Kept.Mean, row.Rejected.Mean)
		}
	}
	var b strings.Builder
	res.Markdown(&b)
	for _, s := range Scores {
		if !strings.Contains(b.String(), "| "+s+" |") {
			t.Errorf("table lacks score %q:\n%s", s, b.String())
		}
	}
}

// TestCosineNCMLOO: the leave-one-out cosine to the nearest class mean,
// from the class sums less the sample, equals the cosine computed on the
// training set without the sample (brute force), including a class of
// one sample (no mean left: it drops out) and one of two.
func TestCosineNCMLOO(t *testing.T) {
	const d = 6
	r := rand.New(rand.NewPCG(3, 9))
	labels := []int{4, 4, 4, 4, 7, 7, 7, 9, 2, 2}
	x := make([]float32, len(labels)*d)
	for i := range x {
		x[i] = float32(r.NormFloat64() + 0.5)
	}
	sel := []int{0, 3, 5, 7, 8}
	got := cosineNCMLOO(x, labels, d, sel)
	for k, i := range sel {
		var rx []float32
		var ry []int
		for j := range labels {
			if j != i {
				rx = append(rx, x[j*d:(j+1)*d]...)
				ry = append(ry, labels[j])
			}
		}
		want := cosineNCM(rx, ry, x[i*d:(i+1)*d], d)[0]
		// cosineNCM sums the class means in float32: 1e-6 covers its
		// rounding of sums of a few rows
		if math.Abs(got[k]-want) > 1e-6 {
			t.Errorf("sample %d: %.15g, brute force %.15g", i, got[k], want)
		}
	}
}

// TestViMResidual: training features that lie around their mean in a
// known subspace of dimension dim, plus a small spread along one more
// direction v, uncorrelated with it: the principal subspace is the known
// one, a training row's
// residual is its component along v, and a test row's residual is its
// distance to the subspace, computed here independently by least squares
// on the spanning vectors. The ViM score must be the top score less α
// times that distance, α = (Σ top)/(Σ residual) over the training rows.
// Tolerance: the features are float32 (relative rounding 6e-8 of values
// about 10), which moves the training residuals (about 0.05) by about
// 1e-6 relative, and the eigenvectors of the float64 covariance by less;
// 1e-4 relative leaves a wide margin.
func TestViMResidual(t *testing.T) {
	const d, dim, n = 8, 3, 300
	r := rand.New(rand.NewPCG(4, 4))
	basis := mat.NewDense(dim+1, d, nil) // the last row is v
	for i := 0; i <= dim; i++ {
		for j := 0; j < d; j++ {
			basis.Set(i, j, r.NormFloat64())
		}
	}
	// orthonormalise (Gram-Schmidt) so that v is orthogonal to the span
	for i := 0; i <= dim; i++ {
		row := basis.RawRowView(i)
		for k := 0; k < i; k++ {
			p := dot(row, basis.RawRowView(k))
			for j := range row {
				row[j] -= p * basis.At(k, j)
			}
		}
		nrm := math.Sqrt(dot(row, row))
		for j := range row {
			row[j] /= nrm
		}
	}
	mu := make([]float64, d)
	for j := range mu {
		mu[j] = r.NormFloat64()
	}
	train := make([]float32, n*d)
	top := make([]float64, n)
	sumTop := 0.0
	// rows in fours, (±a, ±g): the covariance has no term across the span
	// and v, so its principal subspace is the span exactly
	for i := 0; i < n; i += 4 {
		a := make([]float64, dim)
		for k := range a {
			a[k] = 3 * r.NormFloat64()
		}
		g := 0.05 * r.NormFloat64()
		for q := 0; q < 4; q++ {
			sa, sg := float64(1-2*(q&1)), float64(1-(q&2))
			for j := 0; j < d; j++ {
				v := mu[j] + sg*g*basis.At(dim, j)
				for k := range a {
					v += sa * a[k] * basis.At(k, j)
				}
				train[(i+q)*d+j] = float32(v)
			}
			top[i+q] = 0.5 + 0.1*r.Float64()
			sumTop += top[i+q]
		}
	}
	// the centre is the training rows' mean; residuals are distances to
	// the span around it
	xbar := make([]float64, d)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			xbar[j] += float64(train[i*d+j]) / n
		}
	}
	span := basis.Slice(0, dim, 0, d)
	resid := func(x []float32) float64 {
		e := mat.NewVecDense(d, nil)
		for j := 0; j < d; j++ {
			e.SetVec(j, float64(x[j])-xbar[j])
		}
		var coef, proj mat.VecDense
		if err := coef.SolveVec(span.T(), e); err != nil {
			t.Fatal(err)
		}
		proj.MulVec(span.T(), &coef)
		e.SubVec(e, &proj)
		return mat.Norm(e, 2)
	}
	sumRes := 0.0
	for i := 0; i < n; i++ {
		sumRes += resid(train[i*d : (i+1)*d])
	}
	alpha := sumTop / sumRes
	const nt = 5
	test := make([]float32, nt*d)
	testTop := make([]float64, nt)
	for i := 0; i < nt; i++ {
		for j := 0; j < d; j++ {
			test[i*d+j] = float32(mu[j] + r.NormFloat64())
		}
		testTop[i] = r.Float64()
	}
	got := vimScores(train, top, test, testTop, d, dim)
	for i := 0; i < nt; i++ {
		want := testTop[i] - alpha*resid(test[i*d:(i+1)*d])
		if math.Abs(got[i]-want) > 1e-4*math.Abs(want) {
			t.Errorf("test row %d: ViM %.8g, want %.8g", i, got[i], want)
		}
	}
}
