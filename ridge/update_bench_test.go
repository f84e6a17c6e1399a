package ridge

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkRankUpdate times the parts of a learn at the factor's λ: the
// low-rank term's update (two triangular solves with the factor for the
// new samples), the drift check, and a refactorisation beside them.
func BenchmarkRankUpdate(b *testing.B) {
	for _, m := range []int{2000, 4000} {
		const n = 20
		h, labels := classData(1, 200+n, m, 4)
		acc, _ := NewAccumulator(m)
		acc.Add(h[:200*m], 200, labels[:200])
		lambda := 100.0
		if err := acc.Factor(context.Background(), lambda); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("lowrank/m=%d/n=%d", m, n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				acc.lr.reset()
				acc.lr.m = m
				if err := acc.lr.add(h[200*m:], n, 1, acc.solve0); err != nil {
					b.Fatal(err)
				}
			}
		})
		acc.Factor(context.Background(), lambda)
		b.Run(fmt.Sprintf("driftcheck/m=%d", m), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				acc.FactorResidual(driftProbes, 1)
			}
		})
		b.Run(fmt.Sprintf("refactor/m=%d", m), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				acc.Factor(context.Background(), lambda)
			}
		})
	}
}
