package openset

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Gaussian holds the streaming statistics of a Gaussian class model in
// feature space: per class the count and the sum of the features, and over
// all samples the sum of xxᵀ (d×d). Like the ridge statistics G and S they
// add (Add), merge (Merge) and forget a class exactly (Forget), and the
// Mahalanobis score is computed from them alone.
type Gaussian struct {
	D     int
	count map[int]int
	sum   map[int][]float64
	xx    *mat.SymDense
	n     int
}

// NewGaussian returns empty statistics for d-dimensional features.
func NewGaussian(d int) *Gaussian {
	return &Gaussian{D: d, count: map[int]int{}, sum: map[int][]float64{}, xx: mat.NewSymDense(d, nil)}
}

// Add accumulates the n×d features x with their labels.
func (g *Gaussian) Add(x []float32, labels []int) error {
	n := len(labels)
	if len(x) != n*g.D {
		return fmt.Errorf("openset: %d values for %d samples of dimension %d", len(x), n, g.D)
	}
	if n == 0 {
		return nil
	}
	xd := mat.NewDense(n, g.D, f64(x))
	g.xx.SymRankK(g.xx, 1, xd.T())
	for i, l := range labels {
		s := g.sum[l]
		if s == nil {
			s = make([]float64, g.D)
			g.sum[l] = s
		}
		for j := 0; j < g.D; j++ {
			s[j] += float64(x[i*g.D+j])
		}
		g.count[l]++
	}
	g.n += n
	return nil
}

// Merge adds the statistics o (of the same dimension) to g.
func (g *Gaussian) Merge(o *Gaussian) error {
	if o.D != g.D {
		return fmt.Errorf("openset: merging statistics of dimension %d into %d", o.D, g.D)
	}
	g.xx.AddSym(g.xx, o.xx)
	for l, s := range o.sum {
		t := g.sum[l]
		if t == nil {
			t = make([]float64, g.D)
			g.sum[l] = t
		}
		for j := range s {
			t[j] += s[j]
		}
		g.count[l] += o.count[l]
	}
	g.n += o.n
	return nil
}

// Forget removes the class l, given its n×d features (its samples' xxᵀ
// leave the shared sum exactly as they came in, up to rounding).
func (g *Gaussian) Forget(l int, x []float32) error {
	n := len(x) / g.D
	if len(x) != n*g.D || n != g.count[l] {
		return fmt.Errorf("openset: forgetting class %d needs its %d samples, got %d values", l, g.count[l], len(x))
	}
	if n > 0 {
		g.xx.SymRankK(g.xx, -1, mat.NewDense(n, g.D, f64(x)).T())
	}
	g.n -= n
	delete(g.sum, l)
	delete(g.count, l)
	return nil
}

// Mahalanobis is a fitted Gaussian class model: class means and the
// inverse of the shared covariance.
type Mahalanobis struct {
	labels []int
	means  *mat.Dense // classes × d
	prec   *mat.SymDense
	pmu    *mat.Dense    // classes × d: means·P
	mpm    []float64     // μᵀPμ per class
	prec0  *mat.SymDense // inverse covariance of all samples around mu0
	mu0    []float64
}

// Fit returns the Mahalanobis model of the statistics: class means, and
// the shared covariance Σ = (Σxxᵀ − Σ_c n_c μ_c μ_cᵀ)/N shrunk towards
// its mean variance, (1−shrink)Σ + shrink·(tr Σ/d)·I, then inverted.
func (g *Gaussian) Fit(shrink float64) (*Mahalanobis, error) {
	if len(g.count) == 0 || g.n <= 0 {
		return nil, fmt.Errorf("openset: no samples")
	}
	labels := make([]int, 0, len(g.count))
	for l := range g.count {
		labels = append(labels, l)
	}
	slices.Sort(labels)
	d := g.D
	means := mat.NewDense(len(labels), d, nil)
	cov := mat.NewSymDense(d, nil)
	cov.CopySym(g.xx)
	for i, l := range labels {
		mu := make([]float64, d)
		for j := range mu {
			mu[j] = g.sum[l][j] / float64(g.count[l])
		}
		means.SetRow(i, mu)
		cov.SymRankOne(cov, -float64(g.count[l]), mat.NewVecDense(d, mu))
	}
	cov.ScaleSym(1/float64(g.n), cov)
	tr := 0.0
	for j := 0; j < d; j++ {
		tr += cov.At(j, j)
	}
	cov.ScaleSym(1-shrink, cov)
	for j := 0; j < d; j++ {
		cov.SetSym(j, j, cov.At(j, j)+shrink*tr/float64(d))
	}
	var ch mat.Cholesky
	if !ch.Factorize(cov) {
		return nil, fmt.Errorf("openset: the shared covariance is not positive definite (shrink %g)", shrink)
	}
	prec := mat.NewSymDense(d, nil)
	if err := ch.InverseTo(prec); err != nil {
		return nil, fmt.Errorf("openset: inverting the covariance: %w", err)
	}
	var pmu mat.Dense
	pmu.Mul(means, prec)
	mpm := make([]float64, len(labels))
	for i := range labels {
		mpm[i] = mat.Dot(pmu.RowView(i), means.RowView(i))
	}
	mh := &Mahalanobis{labels: labels, means: means, prec: prec, pmu: &pmu, mpm: mpm}
	// the background: one Gaussian over all samples (relative Mahalanobis)
	bg := mat.NewSymDense(d, nil)
	bg.CopySym(g.xx)
	mu0 := make([]float64, d)
	for _, l := range labels {
		for j := range mu0 {
			mu0[j] += g.sum[l][j] / float64(g.n)
		}
	}
	bg.SymRankOne(bg, -float64(g.n), mat.NewVecDense(d, mu0))
	bg.ScaleSym(1/float64(g.n), bg)
	tr0 := 0.0
	for j := 0; j < d; j++ {
		tr0 += bg.At(j, j)
	}
	bg.ScaleSym(1-shrink, bg)
	for j := 0; j < d; j++ {
		bg.SetSym(j, j, bg.At(j, j)+shrink*tr0/float64(d))
	}
	var ch0 mat.Cholesky
	if !ch0.Factorize(bg) {
		return nil, fmt.Errorf("openset: the background covariance is not positive definite (shrink %g)", shrink)
	}
	mh.prec0 = mat.NewSymDense(d, nil)
	if err := ch0.InverseTo(mh.prec0); err != nil {
		return nil, fmt.Errorf("openset: inverting the background covariance: %w", err)
	}
	mh.mu0 = mu0
	return mh, nil
}

// Relative returns, for each of the n×d features x, minus the relative
// Mahalanobis distance (Ren et al., 2021): the squared distance to the
// nearest class minus that to one Gaussian fitted to all samples.
func (mh *Mahalanobis) Relative(x []float32, d int) []float64 {
	out := mh.Scores(x, d)
	n := len(x) / d
	xc := mat.NewDense(n, d, f64(x))
	for i := 0; i < n; i++ {
		r := xc.RawRowView(i)
		for j := range r {
			r[j] -= mh.mu0[j]
		}
	}
	var xp mat.Dense
	xp.Mul(xc, mh.prec0)
	for i := range out {
		out[i] += mat.Dot(xp.RowView(i), xc.RowView(i))
	}
	return out
}

// Scores returns, for each of the n×d features x, minus the squared
// Mahalanobis distance to the nearest class mean (larger: more known).
func (mh *Mahalanobis) Scores(x []float32, d int) []float64 {
	n := len(x) / d
	xd := mat.NewDense(n, d, f64(x))
	var xp, cross mat.Dense
	xp.Mul(xd, mh.prec)
	cross.Mul(xd, mh.pmu.T())
	out := make([]float64, n)
	for i := 0; i < n; i++ {
		xpx := mat.Dot(xp.RowView(i), xd.RowView(i))
		best := math.Inf(1)
		for c := range mh.labels {
			best = min(best, xpx-2*cross.At(i, c)+mh.mpm[c])
		}
		out[i] = -best
	}
	return out
}

// normalizedRows returns the rows of x (n×d) scaled to unit length.
func normalizedRows(x []float32, d int) *mat.Dense {
	n := len(x) / d
	out := mat.NewDense(n, d, f64(x))
	for i := 0; i < n; i++ {
		r := out.RawRowView(i)
		s := 0.0
		for _, v := range r {
			s += v * v
		}
		if s > 0 {
			s = 1 / math.Sqrt(s)
			for j := range r {
				r[j] *= s
			}
		}
	}
	return out
}

// cosineNCM returns, for each row of test, the largest cosine to a class
// mean of the training features.
func cosineNCM(train []float32, labels []int, test []float32, d int) []float64 {
	cls := slices.Clone(labels)
	slices.Sort(cls)
	cls = slices.Compact(cls)
	pos := map[int]int{}
	for i, l := range cls {
		pos[l] = i
	}
	means := make([]float32, len(cls)*d)
	for i, l := range labels {
		r := means[pos[l]*d : (pos[l]+1)*d]
		for j := range r {
			r[j] += train[i*d+j]
		}
	}
	mn := normalizedRows(means, d)
	tn := normalizedRows(test, d)
	var sim mat.Dense
	sim.Mul(tn, mn.T())
	n, _ := sim.Dims()
	out := make([]float64, n)
	for i := range out {
		out[i] = slices.Max(sim.RawRowView(i))
	}
	return out
}

// cosineKNN returns, for each row of test, the cosine to its k-th nearest
// training sample (Sun et al., 2022: the k-th nearest neighbour distance
// of normalised features).
func cosineKNN(train []float32, test []float32, d, k int) []float64 {
	trn := normalizedRows(train, d)
	tn := normalizedRows(test, d)
	var sim mat.Dense
	sim.Mul(tn, trn.T())
	n, nt := sim.Dims()
	k = min(max(k, 1), nt)
	out := make([]float64, n)
	for i := range out {
		r := slices.Clone(sim.RawRowView(i))
		slices.Sort(r)
		out[i] = r[nt-k]
	}
	return out
}

func f64(s []float32) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = float64(v)
	}
	return out
}
