package openset

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/features"
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
		if _, ok := ridgeScore(row.Score); ok && (row.Kept.Mean < 0.85 || row.Rejected.Mean < 0.9) {
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
