package linalg

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	gblas "gonum.org/v1/gonum/blas/gonum"
	glapack "gonum.org/v1/gonum/lapack/gonum"
)

// BenchmarkSpotrf factors an m×m diagonally dominant symmetric matrix
// (SPD by Gershgorin's theorem); BenchmarkSsyrk accumulates the Gram
// matrix of n = 1000 samples (the learn's other m² step). scripts/cholbench
// runs them in the cgo (OpenBLAS) and the CGO_ENABLED=0 (pure Go) test
// binaries side by side.
func BenchmarkSpotrf(b *testing.B) {
	for _, m := range []int{2000, 10000} {
		b.Run(fmt.Sprintf("m=%d", m), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, uint64(m)))
			a := make([]float32, m*m)
			for i := 0; i < m; i++ {
				a[i*m+i] = float32(m)
				for j := i + 1; j < m; j++ {
					a[i*m+j] = float32(r.Float64()*2 - 1)
				}
			}
			w := make([]float32, len(a))
			b.ResetTimer()
			for it := 0; it < b.N; it++ {
				b.StopTimer()
				copy(w, a)
				b.StartTimer()
				if err := Spotrf(m, w, m); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(m)*float64(m)*float64(m)/3/(b.Elapsed().Seconds()/float64(b.N))/1e9, "GFLOP/s")
		})
	}
}

func BenchmarkSsyrk(b *testing.B) {
	const n = 1000
	for _, m := range []int{2000, 10000} {
		b.Run(fmt.Sprintf("m=%d", m), func(b *testing.B) {
			r := rand.New(rand.NewPCG(2, uint64(m)))
			h := make([]float32, n*m)
			for i := range h {
				h[i] = float32(r.NormFloat64())
			}
			g := make([]float32, m*m)
			b.ResetTimer()
			for it := 0; it < b.N; it++ {
				SsyrkLower(true, m, n, 1, h, m, 1, g, m)
			}
			b.ReportMetric(float64(m)*float64(m)*float64(n)/(b.Elapsed().Seconds()/float64(b.N))/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkGonumReference is what the pure-Go build did before its
// blocked parallel routines, for the same inputs: gonum's float64 Dpotrf
// of the matrix converted to float64 (the conversion included), and
// gonum's single-goroutine Ssyrk.
func BenchmarkGonumReference(b *testing.B) {
	for _, m := range []int{2000, 10000} {
		b.Run(fmt.Sprintf("Dpotrf/m=%d", m), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, uint64(m)))
			a := make([]float64, m*m)
			for i := 0; i < m; i++ {
				a[i*m+i] = float64(m)
				for j := i + 1; j < m; j++ {
					a[i*m+j] = float64(float32(r.Float64()*2 - 1))
				}
			}
			w := make([]float64, len(a))
			b.ResetTimer()
			for it := 0; it < b.N; it++ {
				copy(w, a)
				if !(glapack.Implementation{}).Dpotrf(blas.Upper, m, w, m) {
					b.Fatal("not positive definite")
				}
			}
			b.ReportMetric(float64(m)*float64(m)*float64(m)/3/(b.Elapsed().Seconds()/float64(b.N))/1e9, "GFLOP/s")
		})
		b.Run(fmt.Sprintf("Ssyrk/m=%d", m), func(b *testing.B) {
			const n = 1000
			r := rand.New(rand.NewPCG(2, uint64(m)))
			h := make([]float32, n*m)
			for i := range h {
				h[i] = float32(r.NormFloat64())
			}
			g := make([]float32, m*m)
			b.ResetTimer()
			for it := 0; it < b.N; it++ {
				(gblas.Implementation{}).Ssyrk(blas.Lower, blas.Trans, m, n, 1, h, m, 1, g, m)
			}
			b.ReportMetric(float64(m)*float64(m)*float64(n)/(b.Elapsed().Seconds()/float64(b.N))/1e9, "GFLOP/s")
		})
	}
}
