package analysis

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/flycl/flycl/projection"
)

// Distortion summarises the Johnson–Lindenstrauss distortion ratios
// ‖f(x) − f(y)‖ / (s·‖x − y‖) of one map f over pairs of samples, with
// s = √(m·p/d) the scale that makes E‖Wz‖² = s²‖z‖² for W with p N(0,1)
// entries per row in random columns (so the ratio's mean square is exactly
// 1 before top-k).
type Distortion struct {
	Name   string    `json:"name"`
	Ratios []float64 `json:"-"`
	Mean   float64   `json:"mean"`
	Std    float64   `json:"std"`
	RMS    float64   `json:"rms"` // √mean(ratio²)
	P05    float64   `json:"p05"`
	P50    float64   `json:"p50"`
	P95    float64   `json:"p95"`
	// Spread is (P95 − P05)/P50: the relative width of the middle 90%,
	// comparable between maps of different overall scale (top-k).
	Spread float64 `json:"spread"`
}

// ProjectionDistortion compares the sparse W (p non-zeros per row) with a
// dense Gaussian W (p = d), each before and after top-k (k of m kept, mode),
// on `pairs` random pairs of distinct rows of x (n×d), drawn from seed.
// Both matrices come from projection.Generate with the same seed.
func ProjectionDistortion(ctx context.Context, x []float32, d, m, p, k int, mode projection.TopKMode, pairs int, seed uint64) ([]Distortion, error) {
	if d <= 0 || len(x)%d != 0 {
		return nil, fmt.Errorf("analysis: %d values are not rows of d=%d", len(x), d)
	}
	n := len(x) / d
	if n < 2 {
		return nil, fmt.Errorf("analysis: need at least 2 samples, got %d", n)
	}
	if pairs < 1 {
		return nil, fmt.Errorf("analysis: pairs must be positive, got %d", pairs)
	}
	if k < 1 || k > m {
		return nil, fmt.Errorf("analysis: k must be in [1, m=%d], got %d", m, k)
	}
	r := rand.New(rand.NewPCG(seed, 0x4a4c))
	type pair struct{ a, b int }
	ps := make([]pair, 0, pairs)
	for len(ps) < pairs {
		a, b := r.IntN(n), r.IntN(n)
		if a == b || distance(x[a*d:(a+1)*d], x[b*d:(b+1)*d]) == 0 {
			continue
		}
		ps = append(ps, pair{a, b})
	}
	// Only the rows in some pair are projected.
	rowOf := map[int]int{}
	var sub []float32
	for _, q := range ps {
		for _, i := range []int{q.a, q.b} {
			if _, ok := rowOf[i]; !ok {
				rowOf[i] = len(rowOf)
				sub = append(sub, x[i*d:(i+1)*d]...)
			}
		}
	}
	ns := len(rowOf)
	var out []Distortion
	for _, v := range []struct {
		name string
		p    int
	}{{fmt.Sprintf("sparse W (p=%d)", p), p}, {"dense Gaussian W", d}} {
		w, err := projection.Generate(m, d, v.p, seed)
		if err != nil {
			return nil, err
		}
		h := make([]float32, ns*m)
		if err := w.Apply(ctx, projection.Auto, sub, ns, h); err != nil {
			return nil, err
		}
		scale := math.Sqrt(float64(m) * float64(v.p) / float64(d))
		ratios := func(h []float32) []float64 {
			rs := make([]float64, len(ps))
			for i, q := range ps {
				ia, ib := rowOf[q.a], rowOf[q.b]
				rs[i] = distance(h[ia*m:(ia+1)*m], h[ib*m:(ib+1)*m]) / (scale * distance(x[q.a*d:(q.a+1)*d], x[q.b*d:(q.b+1)*d]))
			}
			return rs
		}
		out = append(out, summarise(v.name, ratios(h)))
		projection.TopK(h, ns, m, k, mode)
		out = append(out, summarise(fmt.Sprintf("%s + top-k (k=%d)", v.name, k), ratios(h)))
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func distance(a, b []float32) float64 {
	var s float64
	for i, v := range a {
		e := float64(v) - float64(b[i])
		s += e * e
	}
	return math.Sqrt(s)
}

func summarise(name string, rs []float64) Distortion {
	s := Distortion{Name: name, Ratios: rs}
	var sum, sq float64
	for _, v := range rs {
		sum += v
		sq += v * v
	}
	nf := float64(len(rs))
	s.Mean = sum / nf
	s.RMS = math.Sqrt(sq / nf)
	if len(rs) > 1 {
		s.Std = math.Sqrt(max(sq-nf*s.Mean*s.Mean, 0) / (nf - 1))
	}
	sorted := slices.Sorted(slices.Values(rs))
	q := func(f float64) float64 { return sorted[min(len(sorted)-1, int(f*float64(len(sorted))))] }
	s.P05, s.P50, s.P95 = q(0.05), q(0.5), q(0.95)
	if s.P50 > 0 {
		s.Spread = (s.P95 - s.P05) / s.P50
	}
	return s
}
