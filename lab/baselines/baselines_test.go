package baselines

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/lab/experiment"
)

func blobs(seed uint64, n, d int, labels []int, noise float64) ([]float32, []int) {
	r := rand.New(rand.NewPCG(seed, 3))
	x := make([]float32, n*d)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		l := labels[r.IntN(len(labels))]
		y[i] = l
		mr := rand.New(rand.NewPCG(uint64(l)+100, 1))
		for j := 0; j < d; j++ {
			x[i*d+j] = float32(mr.NormFloat64() + noise*r.NormFloat64())
		}
	}
	return x, y
}

var ctx = context.Background()

// NCM equals an explicit argmax of cosine similarity to the class means.
func TestNCMIsCosineToMeans(t *testing.T) {
	const d = 5
	m := NewNCM(d)
	var allX []float32
	var allY []int
	for ti, cls := range [][]int{{3, 8}, {1}} {
		x, y := blobs(uint64(ti), 40, d, cls, 1.5)
		if err := m.LearnTask(ctx, x, y); err != nil {
			t.Fatal(err)
		}
		allX, allY = append(allX, x...), append(allY, y...)
	}
	means := map[int][]float64{}
	counts := map[int]int{}
	for i, l := range allY {
		if means[l] == nil {
			means[l] = make([]float64, d)
		}
		for j := 0; j < d; j++ {
			means[l][j] += float64(allX[i*d+j])
		}
		counts[l]++
	}
	tx, _ := blobs(9, 50, d, []int{1, 3, 8}, 3)
	got, err := m.Predict(ctx, tx)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		best, bv := -1, math.Inf(-1)
		for _, l := range []int{1, 3, 8} {
			var dot, nx, nm float64
			for j := 0; j < d; j++ {
				mu := means[l][j] / float64(counts[l])
				dot += float64(tx[i*d+j]) * mu
				nx += float64(tx[i*d+j]) * float64(tx[i*d+j])
				nm += mu * mu
			}
			if c := dot / math.Sqrt(nx*nm); c > bv {
				best, bv = l, c
			}
		}
		if got[i] != best {
			t.Fatalf("sample %d: NCM %d, explicit cosine %d", i, got[i], best)
		}
	}
}

// F-OAL's recursive updates equal the batch ridge solution with its γ:
// W = (ZᵀZ + γI)⁻¹ ZᵀY over everything seen, Z the sigmoid codes.
func TestFOALRecursiveEqualsBatchRidge(t *testing.T) {
	const d, e, gamma = 6, 25, 0.5
	f, err := NewFOAL(d, e, gamma, 4)
	if err != nil {
		t.Fatal(err)
	}
	var z []float64
	var y []int
	for ti, cls := range [][]int{{0, 1, 2}, {7, 5}} {
		x, lab := blobs(uint64(ti+1), 57, d, cls, 1) // 57: the last batch is short
		if err := f.LearnTask(ctx, x, lab); err != nil {
			t.Fatal(err)
		}
		z = append(z, f.Embed(x, 57)...)
		y = append(y, lab...)
	}
	n := len(y)
	classes := []int{0, 1, 2, 5, 7}
	Z := mat.NewDense(n, e, z)
	Y := mat.NewDense(n, len(classes), nil)
	for i, l := range y {
		Y.Set(i, slices.Index(classes, l), 1)
	}
	var a, b, want mat.Dense
	a.Mul(Z.T(), Z)
	for i := 0; i < e; i++ {
		a.Set(i, i, a.At(i, i)+gamma)
	}
	b.Mul(Z.T(), Y)
	if err := want.Solve(&a, &b); err != nil {
		t.Fatal(err)
	}
	w, nc := f.Weights()
	if nc != len(classes) {
		t.Fatalf("%d classes", nc)
	}
	scale := mat.Norm(&want, math.Inf(1))
	for i := 0; i < e; i++ {
		for c := 0; c < nc; c++ {
			if diff := math.Abs(w[i*nc+c] - want.At(i, c)); diff > 1e-8*scale {
				t.Fatalf("W[%d,%d] = %.12g, batch ridge %.12g", i, c, w[i*nc+c], want.At(i, c))
			}
		}
	}
}

// RanPAC's λ choice equals an explicit fit on the first 80% and MSE on
// the last 20% for every grid value, in both the dual (n < M) and the
// primal (n ≥ M) computation.
func TestRanPACLambdaMatchesExplicit8020(t *testing.T) {
	for _, tc := range []struct{ n, m int }{{50, 60}, {90, 30}} {
		const nc = 4
		r := rand.New(rand.NewPCG(uint64(tc.n), 5))
		h := make([]float32, tc.n*tc.m)
		labels := make([]int, tc.n)
		for i := 0; i < tc.n; i++ {
			labels[i] = r.IntN(nc)
			for j := 0; j < tc.m; j++ {
				v := r.NormFloat64() + float64(labels[i]*(j%3))
				h[i*tc.m+j] = float32(math.Max(v, 0))
			}
		}
		grid := []float64{1e-2, 1e-1, 1, 10, 100, 1e3, 1e4}
		got, err := SplitValidationMSE(h, tc.n, tc.m, labels, nc, grid)
		if err != nil {
			t.Fatal(err)
		}
		ntr := int(float64(tc.n) * 0.8)
		H := mat.NewDense(tc.n, tc.m, nil)
		Y := mat.NewDense(tc.n, nc, nil)
		for i := 0; i < tc.n; i++ {
			for j := 0; j < tc.m; j++ {
				H.Set(i, j, float64(h[i*tc.m+j]))
			}
			Y.Set(i, labels[i], 1)
		}
		htr, hv := H.Slice(0, ntr, 0, tc.m), H.Slice(ntr, tc.n, 0, tc.m)
		ytr, yv := Y.Slice(0, ntr, 0, nc), Y.Slice(ntr, tc.n, 0, nc)
		bestGot, bestWant := 0, 0
		var wantLoss []float64
		for gi, lambda := range grid {
			var g, q, wo, pred, diff mat.Dense
			g.Mul(htr.T(), htr)
			for i := 0; i < tc.m; i++ {
				g.Set(i, i, g.At(i, i)+lambda)
			}
			q.Mul(htr.T(), ytr)
			if err := wo.Solve(&g, &q); err != nil {
				t.Fatal(err)
			}
			pred.Mul(hv, &wo)
			diff.Sub(&pred, yv)
			nrm := mat.Norm(&diff, 2)
			loss := nrm * nrm / float64((tc.n-ntr)*nc)
			wantLoss = append(wantLoss, loss)
			if math.Abs(got[gi]-loss) > 1e-6*loss {
				t.Errorf("n=%d m=%d lambda %g: MSE %.10g, explicit %.10g", tc.n, tc.m, lambda, got[gi], loss)
			}
			if got[gi] < got[bestGot] {
				bestGot = gi
			}
			if loss < wantLoss[bestWant] {
				bestWant = gi
			}
		}
		if bestGot != bestWant {
			t.Errorf("n=%d m=%d: chose lambda %g, explicit %g", tc.n, tc.m, grid[bestGot], grid[bestWant])
		}
	}
}

// RanDumb's streaming statistics give the batch LDA: the pooled
// within-class covariance computed from centred samples, the OAS
// shrinkage by its formula, and the Mahalanobis nearest-mean prediction.
func TestRanDumbStreamingEqualsBatchLDA(t *testing.T) {
	const d, D = 4, 12
	rd, err := NewRanDumb(d, D, 3)
	if err != nil {
		t.Fatal(err)
	}
	var z []float64
	var y []int
	for ti, cls := range [][]int{{0, 1}, {2, 3}, {4}} {
		x, lab := blobs(uint64(ti+20), 30, d, cls, 0.7)
		if err := rd.LearnTask(ctx, x, lab); err != nil {
			t.Fatal(err)
		}
		for _, v := range rd.Embed(x, 30) {
			z = append(z, float64(v))
		}
		y = append(y, lab...)
	}
	n := len(y)
	means := map[int][]float64{}
	cnt := map[int]int{}
	for i, l := range y {
		if means[l] == nil {
			means[l] = make([]float64, D)
		}
		for j := 0; j < D; j++ {
			means[l][j] += z[i*D+j]
		}
		cnt[l]++
	}
	for l := range means {
		for j := range means[l] {
			means[l][j] /= float64(cnt[l])
		}
	}
	cov := mat.NewSymDense(D, nil)
	for i, l := range y {
		for a := 0; a < D; a++ {
			for b := a; b < D; b++ {
				cov.SetSym(a, b, cov.At(a, b)+(z[i*D+a]-means[l][a])*(z[i*D+b]-means[l][b])/float64(n))
			}
		}
	}
	got := rd.Covariance()
	for a := 0; a < D; a++ {
		for b := 0; b < D; b++ {
			if math.Abs(got[a*D+b]-cov.At(a, b)) > 1e-5*cov.At(a, a) {
				t.Fatalf("cov[%d,%d] = %g, batch %g", a, b, got[a*D+b], cov.At(a, b))
			}
		}
	}
	// OAS (Chen et al. 2010, as in scikit-learn): shrink toward mu·I.
	var tr, sq float64
	for a := 0; a < D; a++ {
		tr += cov.At(a, a)
		for b := 0; b < D; b++ {
			sq += cov.At(a, b) * cov.At(a, b)
		}
	}
	mu, alpha := tr/D, sq/(D*D)
	sh := math.Min((alpha+mu*mu)/(float64(n+1)*(alpha-mu*mu/D)), 1)
	if math.Abs(rd.Shrinkage-sh) > 1e-4*sh {
		t.Fatalf("shrinkage %g, direct %g", rd.Shrinkage, sh)
	}
	shrunk := mat.NewSymDense(D, nil)
	for a := 0; a < D; a++ {
		for b := a; b < D; b++ {
			v := (1 - sh) * cov.At(a, b)
			if a == b {
				v += sh * mu
			}
			shrunk.SetSym(a, b, v)
		}
	}
	var chol mat.Cholesky
	if !chol.Factorize(shrunk) {
		t.Fatal("shrunk covariance not positive definite")
	}
	tx, _ := blobs(77, 60, d, []int{0, 1, 2, 3, 4}, 1.2)
	pred, err := rd.Predict(ctx, tx)
	if err != nil {
		t.Fatal(err)
	}
	tz := rd.Embed(tx, 60)
	agree := 0
	for i := 0; i < 60; i++ {
		best, bd := -1, math.Inf(1)
		for l := 0; l < 5; l++ {
			diff := mat.NewVecDense(D, nil)
			for j := 0; j < D; j++ {
				diff.SetVec(j, float64(tz[i*D+j])-means[l][j])
			}
			var sol mat.VecDense
			chol.SolveVecTo(&sol, diff)
			if dist := mat.Dot(diff, &sol); dist < bd {
				best, bd = l, dist
			}
		}
		if pred[i] == best {
			agree++
		}
	}
	// float32 statistics vs a float64 reference: allow one near-tie.
	if agree < 59 {
		t.Errorf("streaming LDA agrees with batch LDA on %d of 60 samples", agree)
	}
}

// Every method learns separated blobs and keeps the old classes.
func TestAllMethodsLearnBlobs(t *testing.T) {
	const d = 10
	cfg := flycl.Config{M: 500, P: 5, K: 150, Lambdas: []float64{0.1, 1, 10, 100}}
	mk := map[string]func() (experiment.Learner, error){
		"ncm":     func() (experiment.Learner, error) { return NewNCM(d), nil },
		"ranpac":  func() (experiment.Learner, error) { return NewRanPAC(d, 300, 1) },
		"foal":    func() (experiment.Learner, error) { return NewFOAL(d, 200, 1, 1) },
		"randumb": func() (experiment.Learner, error) { return NewRanDumb(d, 300, 1) },
		"joint":   func() (experiment.Learner, error) { return NewJoint(cfg, d), nil },
		"noproj":  func() (experiment.Learner, error) { return NewRawRidge(d, cfg.Lambdas) },
		"noridge": func() (experiment.Learner, error) { return NewCodeNCM(cfg, d) },
	}
	for name, f := range mk {
		l, err := f()
		if err != nil {
			t.Fatal(name, err)
		}
		for ti, cls := range [][]int{{0, 1}, {2, 3}, {4, 5}} {
			x, y := blobs(uint64(ti+40), 120, d, cls, 0.5)
			if err := l.LearnTask(ctx, x, y); err != nil {
				t.Fatal(name, err)
			}
		}
		tx, ty := blobs(99, 300, d, []int{0, 1, 2, 3, 4, 5}, 0.5)
		pred, err := l.Predict(ctx, tx)
		if err != nil {
			t.Fatal(name, err)
		}
		hit := 0
		for i := range pred {
			if pred[i] == ty[i] {
				hit++
			}
		}
		if acc := float64(hit) / 300; acc < 0.9 {
			t.Errorf("%s: accuracy %.3f on separated blobs", name, acc)
		}
		if _, err := l.Predict(ctx, tx[:d+1]); err == nil {
			t.Errorf("%s: wrong dimension: no error", name)
		}
		bad := slices.Clone(tx[:2*d])
		bad[3] = float32(math.NaN())
		if err := l.LearnTask(ctx, bad, []int{0, 1}); err == nil {
			t.Errorf("%s: NaN: no error", name)
		}
	}
}
