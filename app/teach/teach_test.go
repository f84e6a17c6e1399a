package teach

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flycl/flycl/internal/codec"

	"gonum.org/v1/gonum/mat"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/format/modelfile"
)

var testCfg = flycl.Config{M: 48, P: 3, K: 12, Seed: 5, Lambdas: []float64{0.5}}

const testD = 4

// blobs are n samples per class around centres that overlap (b lies
// between a and c), so that some samples are wrong when left out.
func blobs(classes []string, n int, seed uint64) ([]float32, []string) {
	centres := map[string][testD]float64{"a": {1, 0, 0, 0.2}, "b": {0.6, 0.5, 0, 0.2}, "c": {0, 1, 0, 0.2}, "x": {0, 0, 1, 0.2}}
	r := rand.New(rand.NewPCG(seed, 1))
	var x []float32
	var names []string
	for _, c := range classes {
		for range n {
			for k := range testD {
				x = append(x, float32(centres[c][k]+0.25*r.NormFloat64()))
			}
			names = append(names, c)
		}
	}
	return x, names
}

// build learns a, b and c in two learns, and x, forgotten exactly
// afterwards, recording the journal's history as a store does.
func build(t testing.TB) (*deploy.Model, []*modelfile.JournalEntry) {
	t.Helper()
	ctx := context.Background()
	m, err := deploy.New(testCfg, testD, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var hist []*modelfile.JournalEntry
	learn := func(x []float32, names []string) {
		before := store.PriorOf(m)
		if _, err := m.Learn(ctx, x, names, nil, deploy.LearnOptions{}); err != nil {
			t.Fatal(err)
		}
		hist = append(hist, store.LearnEntry(m.Model.Version(), before, x, names, testD, deploy.LearnOptions{}))
	}
	x1, n1 := blobs([]string{"a", "b", "c"}, 5, 1)
	learn(x1, n1)
	xx, nx := blobs([]string{"x"}, 4, 2)
	learn(xx, nx)
	x2, n2 := blobs([]string{"a", "b", "c"}, 3, 3)
	learn(x2, n2)
	if _, _, err := m.Forget(ctx, "x", xx, nil); err != nil {
		t.Fatal(err)
	}
	hist = append(hist, store.ForgetEntry(m.Model.Version(), "x", xx, testD))
	return m, hist
}

// TestReportLeaveOneOut checks the report's leave-one-out numbers
// against brute force: for every sample, a model learned from scratch on
// all the other samples (same projection, same λ) scores it, and the
// cosine of its code to the other samples' class sums is taken from the
// codes directly. Its own class's score and margin, its answer, whether
// the rejection rejects it, the per-class accuracy and rejected shares
// and the confusions must agree; the forgotten class's samples are not
// scored.
//
// Tolerance: both computations run in float32. The rank-one downdate
// (f − a·y)/(1 − a) and the refit each solve with G + λI, whose relative
// error is about κ(G + λI)·u (u = 2⁻²⁴) times the scores' size, and the
// downdate divides by 1 − a (a the sample's leverage, below 1). So the
// bound is 64·κ·u·(1 + max|f|)/(1 − max a), κ and a computed here in
// float64 from the codes; 64 covers the sums of m = 48 terms in each
// product. A decision (answer, rejection) is compared only when its
// margin exceeds the bound.
func TestReportLeaveOneOut(t *testing.T) {
	ctx := context.Background()
	m, hist := build(t)
	names := m.Model.Classes().Names()
	if !slices.Equal(names, []string{"a", "b", "c"}) {
		t.Fatalf("classes %v", names)
	}
	// the samples the model holds, as the brute force sees them
	all := journalSamples(hist, map[string]bool{"a": true, "b": true, "c": true})
	if len(all) != 24 {
		t.Fatalf("%d journal samples; want 24 (x forgotten)", len(all))
	}
	n, mm := len(all), testCfg.M
	var x []float32
	for _, s := range all {
		x = append(x, s.x...)
	}
	h, err := codec.Expand(ctx, m.Model, x)
	if err != nil {
		t.Fatal(err)
	}
	lambda := m.Model.Lambda()
	kappa, maxA := conditioning(t, h, n, mm, lambda)

	rej := m.Model.Rejection()
	if !rej.Enabled() {
		t.Fatalf("the model's rejection is off (%+v): the test wants to check the rejected shares", rej)
	}
	maxF := 0.0
	type brute struct {
		row     []float32
		cos     float64
		own     int
		answer  string
		margin  float64
		rejects bool
	}
	bf := make([]brute, n)
	for i, s := range all {
		var xo []float32
		var no []string
		for j, o := range all {
			if j != i {
				xo = append(xo, o.x...)
				no = append(no, o.class)
			}
		}
		mi, err := deploy.New(testCfg, testD, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mi.Learn(ctx, xo, no, nil, deploy.LearnOptions{Lambda: lambda}); err != nil {
			t.Fatal(err)
		}
		sc, err := mi.Model.Predictor().Scores(ctx, s.x)
		if err != nil {
			t.Fatal(err)
		}
		// in the report's column order
		row := make([]float32, len(names))
		for j, nm := range mi.Model.Classes().Names() {
			row[slices.Index(names, nm)] = sc[j]
		}
		// the cosine to the other samples' class sums (flycl.ClassCosine's definition)
		sums := make([]float64, len(names)*mm)
		for j, o := range all {
			if j == i {
				continue
			}
			c := slices.Index(names, o.class)
			for k := range mm {
				sums[c*mm+k] += float64(h[j*mm+k])
			}
		}
		cos := -1.0
		hn := 0.0
		for k := range mm {
			hn += float64(h[i*mm+k]) * float64(h[i*mm+k])
		}
		for c := range names {
			dot, sn := 0.0, 0.0
			for k := range mm {
				dot += sums[c*mm+k] * float64(h[i*mm+k])
				sn += sums[c*mm+k] * sums[c*mm+k]
			}
			cos = max(cos, dot/math.Sqrt(sn*hn))
		}
		own := slices.Index(names, s.class)
		best, other := 0, -1
		for j, v := range row {
			maxF = max(maxF, math.Abs(float64(v)))
			if v > row[best] {
				best = j
			}
			if j != own && (other < 0 || v > row[other]) {
				other = j
			}
		}
		margin := float64(row[own] - row[other])
		if margin <= 0 && best == own {
			best = other
		}
		bf[i] = brute{row: row, cos: cos, own: own, answer: names[best], margin: margin}
	}
	// a threshold that rejects about a third of the samples left out (the
	// calibrated one rejects too few of these to check anything)
	vals := make([]float64, n)
	for i, b := range bf {
		vals[i] = rej.Value(b.row, b.cos)
	}
	slices.Sort(vals)
	rej.Threshold = (vals[n/3] + vals[n/3+1]) / 2
	if err := m.Model.SetRejection(rej); err != nil {
		t.Fatal(err)
	}
	for i := range bf {
		bf[i].rejects = rej.Reject(bf[i].row, bf[i].cos)
	}
	rep, err := Compute(ctx, m, hist, Options{Hardest: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Samples != 24 || len(rep.Hardest) != 24 {
		t.Fatalf("%d scored, %d listed; want 24 (x forgotten)", rep.Samples, len(rep.Hardest))
	}
	type key struct {
		learn uint64
		row   int
	}
	got := map[key]Sample{}
	for _, s := range rep.Hardest {
		got[key{s.Learn, s.Row}] = s
	}
	tol := 64 * kappa * 0x1p-24 * (1 + maxF) / (1 - maxA)
	t.Logf("κ(G+λI) = %.3g, max leverage %.3f, max |f| %.3g: tolerance %.3g", kappa, maxA, maxF, tol)
	if tol > 0.05 {
		t.Fatalf("tolerance %g: the problem is too ill-conditioned to tell anything", tol)
	}
	worst := 0.0
	wantAcc, wantRej := make([]float64, len(names)), make([]float64, len(names))
	conf := map[[2]string]int{}
	wrong := 0
	for i, s := range all {
		b := bf[i]
		g, ok := got[key{s.learn, s.row}]
		if !ok {
			t.Fatalf("sample %d of learn %d is not in the report", s.row, s.learn)
		}
		if math.Abs(float64(g.Score-b.row[b.own])) > tol || math.Abs(float64(g.Margin)-b.margin) > tol {
			t.Fatalf("sample %d of learn %d (%s): score %g margin %g, brute force %g %g (tolerance %g)", s.row, s.learn, s.class, g.Score, g.Margin, b.row[b.own], b.margin, tol)
		}
		worst = max(worst, math.Abs(float64(g.Score-b.row[b.own])), math.Abs(float64(g.Margin)-b.margin))
		if math.Abs(b.margin) <= tol {
			t.Fatalf("sample %d of learn %d is a near tie (margin %g): choose other data", s.row, s.learn, b.margin)
		}
		if g.Answer != b.answer {
			t.Fatalf("sample %d of learn %d (%s): answered %s, brute force %s", s.row, s.learn, s.class, g.Answer, b.answer)
		}
		// the score's value moves by about the tolerance times its
		// standardisation (1/TopStd, and a cosine's error is of the
		// scores' order too: 1/CosStd)
		vtol := tol * (1/rej.TopStd + 1/rej.CosStd)
		if v := rej.Value(b.row, b.cos); math.Abs(v-rej.Threshold) > vtol && g.Rejected != b.rejects {
			t.Fatalf("sample %d of learn %d: rejected %v, brute force %v", s.row, s.learn, g.Rejected, b.rejects)
		}
		if b.margin > 0 {
			wantAcc[b.own]++
		} else {
			wrong++
			conf[[2]string{s.class, b.answer}]++
		}
		if b.rejects {
			wantRej[b.own]++
		}
	}
	t.Logf("largest difference from brute force %.3g", worst)
	if wrong == 0 || rep.Rejected == 0 {
		t.Fatalf("%d wrong, %g rejected when left out: the test checks nothing of the confusions or rejections", wrong, rep.Rejected)
	}
	for c, rc := range rep.Classes {
		if rc.Name != names[c] || rc.Scored != 8 || rc.Samples != 8 {
			t.Fatalf("class %+v: want %s with 8 samples, all scored", rc, names[c])
		}
		if rc.Accuracy != wantAcc[c]/8 || rc.Rejected != wantRej[c]/8 {
			t.Fatalf("class %s: accuracy %g rejected %g, brute force %g %g", rc.Name, rc.Accuracy, rc.Rejected, wantAcc[c]/8, wantRej[c]/8)
		}
	}
	for _, cf := range rep.Confusions {
		if conf[[2]string{cf.Class, cf.As}] != cf.Count {
			t.Fatalf("confusion %s as %s: %d, brute force %d", cf.Class, cf.As, cf.Count, conf[[2]string{cf.Class, cf.As}])
		}
		delete(conf, [2]string{cf.Class, cf.As})
	}
	if len(conf) != 0 {
		t.Fatalf("confusions the report misses: %v", conf)
	}
	for i := 1; i < len(rep.Hardest); i++ {
		if rep.Hardest[i].Margin < rep.Hardest[i-1].Margin {
			t.Fatalf("hardest not sorted by margin at %d", i)
		}
	}
	t.Logf("accuracy %.3f, rejected %.3f, confusions %v", rep.Accuracy, rep.Rejected, rep.Confusions)
}

// conditioning returns κ(G + λI) and the largest leverage
// hᵢᵀ(G + λI)⁻¹hᵢ of the n codes h (rows of mm), in float64.
func conditioning(t *testing.T, h []float32, n, mm int, lambda float64) (kappa, maxA float64) {
	t.Helper()
	hm := mat.NewDense(n, mm, nil)
	for i := range n {
		for j := range mm {
			hm.Set(i, j, float64(h[i*mm+j]))
		}
	}
	g := mat.NewSymDense(mm, nil)
	g.SymOuterK(1, hm.T())
	for i := range mm {
		g.SetSym(i, i, g.At(i, i)+lambda)
	}
	var eig mat.EigenSym
	if !eig.Factorize(g, false) {
		t.Fatal("eigen")
	}
	ev := eig.Values(nil)
	kappa = ev[len(ev)-1] / ev[0]
	var ch mat.Cholesky
	if !ch.Factorize(g) {
		t.Fatal("cholesky")
	}
	for i := range n {
		hi := mat.NewVecDense(mm, nil)
		for j := range mm {
			hi.SetVec(j, float64(h[i*mm+j]))
		}
		var z mat.VecDense
		if err := ch.SolveVecTo(&z, hi); err != nil {
			t.Fatal(err)
		}
		maxA = max(maxA, mat.Dot(hi, &z))
	}
	return kappa, maxA
}

// TestReportAsManyAsTheLastLearn: scoring as many samples as the last
// learn had, but not the same ones (MaxSamples takes the first of each
// class's 7, from the first learn; the last learned one of each), must
// not take the last learn's leverages for them (the core keeps those
// beside its factor after a small learn at the same λ): the scores agree
// with brute-force refits as in TestReportLeaveOneOut, to the same
// tolerance.
func TestReportAsManyAsTheLastLearn(t *testing.T) {
	ctx := context.Background()
	m, err := deploy.New(testCfg, testD, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var hist []*modelfile.JournalEntry
	var all []float32
	var allNames []string
	var starts []int
	for k, per := range []int{6, 1} {
		x, names := blobs([]string{"a", "b", "c"}, per, 10+uint64(k))
		before := store.PriorOf(m)
		if _, err := m.Learn(ctx, x, names, nil, deploy.LearnOptions{LambdaPolicy: flycl.LambdaKeep}); err != nil {
			t.Fatal(err)
		}
		hist = append(hist, store.LearnEntry(m.Model.Version(), before, x, names, testD, deploy.LearnOptions{}))
		starts = append(starts, len(allNames))
		all, allNames = append(all, x...), append(allNames, names...)
	}
	rep, err := Compute(ctx, m, hist, Options{Hardest: 100, MaxSamples: 3})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Samples != 3 {
		t.Fatalf("%d samples scored, want 3", rep.Samples)
	}
	h, err := codec.Expand(ctx, m.Model, all)
	if err != nil {
		t.Fatal(err)
	}
	kappa, maxA := conditioning(t, h, len(allNames), testCfg.M, m.Model.Lambda())
	names := m.Model.Classes().Names()
	fromLast := 0
	for _, s := range rep.Hardest {
		i := s.Row + starts[slices.IndexFunc(hist, func(e *modelfile.JournalEntry) bool { return e.Version == s.Learn })]
		if s.Learn == hist[1].Version {
			fromLast++
		}
		var xo []float32
		var no []string
		for j := range allNames {
			if j != i {
				xo, no = append(xo, all[j*testD:(j+1)*testD]...), append(no, allNames[j])
			}
		}
		mi, err := deploy.New(testCfg, testD, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mi.Learn(ctx, xo, no, nil, deploy.LearnOptions{Lambda: m.Model.Lambda()}); err != nil {
			t.Fatal(err)
		}
		sc, err := mi.Model.Predictor().Scores(ctx, all[i*testD:(i+1)*testD])
		if err != nil {
			t.Fatal(err)
		}
		row := make([]float32, len(names))
		for j, nm := range mi.Model.Classes().Names() {
			row[slices.Index(names, nm)] = sc[j]
		}
		own := slices.Index(names, s.Class)
		other := float32(math.Inf(-1))
		maxF := 0.0
		for j, v := range row {
			maxF = max(maxF, math.Abs(float64(v)))
			if j != own {
				other = max(other, v)
			}
		}
		tol := 64 * kappa * 0x1p-24 * (1 + maxF) / (1 - maxA)
		if d := math.Abs(float64(s.Score - row[own])); d > tol || math.Abs(float64(s.Margin-(row[own]-other))) > tol {
			t.Fatalf("sample %d (%s): score %g margin %g, brute force %g %g (tolerance %g)", i, s.Class, s.Score, s.Margin, row[own], row[own]-other, tol)
		}
	}
	if fromLast == rep.Samples {
		t.Fatalf("the %d scored are the last learn's: want others", fromLast)
	}
}
