package reject

import (
	"context"
	"math/rand/v2"
	"testing"
)

// benchCalib is a learn's calibration inputs at the photo defaults: 20
// samples of 20 classes, top-k codes of 3000 non-zeros of m = 10000.
func benchCalib() (s, h []float32, sel, idx []int, nc, m int) {
	const n, k = 20, 3000
	nc, m = 20, 10000
	r := rand.New(rand.NewPCG(1, 2))
	h = make([]float32, n*m)
	idx, sel = make([]int, n), make([]int, n)
	s = make([]float32, nc*m)
	for i := range n {
		idx[i], sel[i] = i%nc, i
		for _, j := range r.Perm(m)[:k] {
			h[i*m+j] = float32(r.Float64())
		}
	}
	for i := range s {
		s[i] = float32(r.Float64() * 3)
	}
	return s, h, sel, idx, nc, m
}

func BenchmarkLeaveOneOutCosines(b *testing.B) {
	s, h, sel, idx, nc, m := benchCalib()
	for range b.N {
		LeaveOneOutCosines(s, nc, m, h, sel, idx)
	}
}

func BenchmarkJackknife(b *testing.B) {
	s, h, sel, idx, nc, m := benchCalib()
	k := len(sel)
	loo, full := make([]float32, k*nc), make([]float32, k*nc)
	lev, cos := make([]float64, k), make([]float64, k)
	counts := make([]int, nc)
	for _, c := range idx {
		counts[c]++
	}
	hat := func(pj []int) []float64 { return make([]float64, k*len(pj)) }
	for range b.N {
		Jackknife(context.Background(), loo, full, lev, cos, nc, m, h, sel, idx, s, counts, hat)
	}
}
