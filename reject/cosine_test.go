package reject

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLeaveOneOutCosinesBits: LeaveOneOutCosines, which sums over a
// code's non-zeros for the classes it is not of, equals ClassCosine of the
// dense code with its own class, bit for bit, for sparse codes of both
// signs, a class whose only sample is the code (its sum less the code is
// zero: skipped), a zero class and a zero code (cosine 0).
func TestLeaveOneOutCosinesBits(t *testing.T) {
	const nc, m, n = 5, 97, 14
	r := rand.New(rand.NewPCG(3, 5))
	h := make([]float32, n*m)
	idx := make([]int, n)
	for i := range n {
		idx[i] = i % 3 // classes 0..2 hold samples; 3 is zero, 4 gets one
		if i == n-1 {
			idx[i] = 4
		}
		if i == 5 {
			continue // a zero code
		}
		for _, j := range r.Perm(m)[:29] {
			h[i*m+j] = float32(r.NormFloat64())
		}
	}
	s := make([]float32, nc*m)
	sums64 := make([]float64, nc*m)
	for i := range n {
		for j := range m {
			sums64[idx[i]*m+j] += float64(h[i*m+j])
		}
	}
	for i, v := range sums64 {
		s[i] = float32(v)
	}
	sel := []int{0, 1, 2, 5, 7, 12, n - 1}
	got := LeaveOneOutCosines(s, nc, m, h, sel, idx)
	dense, norms := make([]float64, nc*m), make([]float64, nc)
	for i, v := range s {
		dense[i] = float64(v)
		norms[i/m] += float64(v) * float64(v)
	}
	for c := range norms {
		norms[c] = math.Sqrt(norms[c])
	}
	for k, i := range sel {
		x := make([]float64, m)
		for j := range m {
			x[j] = float64(h[i*m+j])
		}
		want, _ := ClassCosine(x, dense, norms, idx[i])
		if math.Float64bits(got[k]) != math.Float64bits(want) {
			t.Errorf("sample %d: %v, ClassCosine %v", i, got[k], want)
		}
	}
	if got[3] != 0 {
		t.Errorf("zero code: cosine %v, want 0", got[3])
	}
}
