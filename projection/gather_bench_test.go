package projection

import (
	"context"
	"math/rand/v2"
	"testing"
)

// BenchmarkApplyFew: the sparse product of a learn of a few photos (20
// samples, m = 10000, d = 1280, p = 300): W's rows split among workers.
func BenchmarkApplyFew(b *testing.B) {
	const m, d, p, n = 10000, 1280, 300, 20
	w, _ := Generate(m, d, p, 1)
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	h := make([]float32, n*m)
	b.ResetTimer()
	for range b.N {
		if err := w.Apply(context.Background(), Sparse, x, n, h); err != nil {
			b.Fatal(err)
		}
	}
}
