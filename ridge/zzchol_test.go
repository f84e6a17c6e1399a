package ridge

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/flycl/flycl/linalg"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack/gonum"
)

func BenchmarkZZChol(b *testing.B) {
	for _, n := range []int{100, 200, 400, 800} {
		r := rand.New(rand.NewPCG(1, 2))
		x := make([]float64, n*n)
		for i := range x {
			x[i] = r.NormFloat64()
		}
		a := make([]float64, n*n)
		linalg.Dgemm(false, true, n, n, n, 1, x, n, x, n, 0, a, n)
		for i := range n {
			a[i*n+i] += 1
		}
		rhs := make([]float64, 40*n)
		b.Run(fmt.Sprint("openblas/", n), func(b *testing.B) {
			c0 := cpuTime()
			for range b.N {
				f := append([]float64(nil), a...)
				linalg.Dpotrf(n, f, n)
				linalg.Dpotrs(n, 40, f, n, rhs, n)
			}
			b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1e6, "cpu-ms/op")
		})
		b.Run(fmt.Sprint("gonum/", n), func(b *testing.B) {
			var impl gonum.Implementation
			c0 := cpuTime()
			for range b.N {
				f := append([]float64(nil), a...)
				impl.Dpotrf(blas.Upper, n, f, n)
				// rhs as columns: solve via Dpotrs with nrhs in column layout needs transposed; just time
				impl.Dpotrs(blas.Lower, n, 40, f, n, rhs, 40)
			}
			b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}
