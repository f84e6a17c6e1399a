package ridge

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkRankUpdate times the parts of a rank-n update of an m×m factor:
// the blocked rotations, the drift check, and a refactorisation beside them.
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
		x := make([]float32, n*m)
		b.Run(fmt.Sprintf("rotations/m=%d/n=%d", m, n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				copy(x, h[200*m:])
				cholRankUpdate(acc.buf, m, x, n, 1)
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
