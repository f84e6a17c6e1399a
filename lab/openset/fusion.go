package openset

import (
	"math"
	"slices"

	"github.com/flycl/flycl/reject"
	"gonum.org/v1/gonum/mat"
)

// signedLog1p returns sign(v)·log(1+|v|) of every value: a monotone
// squashing of large activations that needs no statistic (unlike the
// percentile ReAct clips at, Sun et al., 2021), and to which the cosine
// to the class means responds as it does to clipping.
func signedLog1p(x []float32) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(math.Copysign(math.Log1p(math.Abs(float64(v))), float64(v)))
	}
	return out
}

// classSums returns the sorted classes of labels, their per-class sums of
// the rows of x (n×d, float64) and their counts: the streaming statistics
// the cosine to the class means needs (they add, merge and forget a class
// exactly, like S).
func classSums(x []float32, labels []int, d int) (cls []int, sums [][]float64, counts []int) {
	cls = slices.Clone(labels)
	slices.Sort(cls)
	cls = slices.Compact(cls)
	sums = make([][]float64, len(cls))
	counts = make([]int, len(cls))
	for i := range sums {
		sums[i] = make([]float64, d)
	}
	for i, l := range labels {
		c, _ := slices.BinarySearch(cls, l)
		counts[c]++
		for j, v := range x[i*d : (i+1)*d] {
			sums[c][j] += float64(v)
		}
	}
	return cls, sums, counts
}

// cosineNCMLOO returns, for the training rows sel of x (labels their
// classes), the cosine to the nearest class mean with the row itself
// left out of its class's mean: exact leave-one-out scores from the class
// sums alone (the sum less the row; a class of one sample has no mean
// left and drops out), computed by the model's own formula
// (reject.ClassCosine).
func cosineNCMLOO(x []float32, labels []int, d int, sel []int) []float64 {
	cls, sums, _ := classSums(x, labels, d)
	flat := make([]float64, 0, len(cls)*d)
	norms := make([]float64, len(cls))
	for c, s := range sums {
		norms[c] = math.Sqrt(dot(s, s))
		flat = append(flat, s...)
	}
	out := make([]float64, len(sel))
	row := make([]float64, d)
	for k, i := range sel {
		for j, v := range x[i*d : (i+1)*d] {
			row[j] = float64(v)
		}
		own, _ := slices.BinarySearch(cls, labels[i])
		v, ok := reject.ClassCosine(row, flat, norms, own)
		if !ok {
			v = math.Inf(-1)
		}
		out[k] = v
	}
	return out
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// standardizer maps a score to its z-score under the mean and standard
// deviation of reference values (the leave-one-out scores of the
// calibration samples: no test data).
type standardizer struct{ mean, std float64 }

func newStandardizer(ref []float64) standardizer {
	m := 0.0
	for _, v := range ref {
		m += v
	}
	m /= float64(len(ref))
	s := 0.0
	for _, v := range ref {
		s += (v - m) * (v - m)
	}
	s = math.Sqrt(s / float64(len(ref)))
	if !(s > 0) {
		s = 1
	}
	return standardizer{m, s}
}

func (z standardizer) apply(v float64) float64 { return (v - z.mean) / z.std }

// fuse returns the sum of the z-scores of a and b.
func fuse(a, b []float64, za, zb standardizer) []float64 {
	out := make([]float64, len(a))
	for i := range out {
		out[i] = za.apply(a[i]) + zb.apply(b[i])
	}
	return out
}

// vimScores returns the ViM score (Wang et al., 2022) of the test rows:
// the top class score less α times the norm of the feature's residual
// outside the principal subspace (the dim eigenvectors of largest
// eigenvalue of the training features' covariance, centred on their
// mean), α making the mean residual of the training rows as large as
// their mean top score. The covariance is the d×d second moment of the
// features less the mean's outer product: streaming statistics that add,
// merge and forget a class exactly.
func vimScores(train []float32, trainTop []float64, test []float32, testTop []float64, d, dim int) []float64 {
	n := len(train) / d
	mu := make([]float64, d)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			mu[j] += float64(train[i*d+j])
		}
	}
	for j := range mu {
		mu[j] /= float64(n)
	}
	centred := func(x []float32) *mat.Dense {
		k := len(x) / d
		out := mat.NewDense(k, d, f64(x))
		for i := 0; i < k; i++ {
			r := out.RawRowView(i)
			for j := range r {
				r[j] -= mu[j]
			}
		}
		return out
	}
	xt := centred(train)
	cov := mat.NewSymDense(d, nil)
	cov.SymOuterK(1/float64(n), xt.T())
	var es mat.EigenSym
	if !es.Factorize(cov, true) {
		return slices.Clone(testTop)
	}
	var v mat.Dense
	es.VectorsTo(&v) // eigenvalues ascending: the first d-dim columns span the residual space
	resid := func(x *mat.Dense) []float64 {
		var p mat.Dense
		p.Mul(x, v.Slice(0, d, 0, d-dim))
		k, _ := p.Dims()
		out := make([]float64, k)
		for i := range out {
			r := p.RawRowView(i)
			out[i] = math.Sqrt(dot(r, r))
		}
		return out
	}
	rt := resid(xt)
	sumTop, sumRes := 0.0, 0.0
	for i := range rt {
		sumTop += trainTop[i]
		sumRes += rt[i]
	}
	alpha := 0.0
	if sumRes > 0 {
		alpha = sumTop / sumRes
	}
	r := resid(centred(test))
	out := make([]float64, len(r))
	for i := range out {
		out[i] = testTop[i] - alpha*r[i]
	}
	return out
}
