package flycl

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/flycl/flycl/projection"
)

// TestPredictorScoresRowByRow: a predictor's scores of a sample are the
// same bits whether the sample is scored alone, in a batch, or in another
// place of a batch, for W applied dense (linalg.SdotRows) and sparse
// (the gather), with top-k selection on. This is what lets a server score
// concurrent requests together and answer each exactly as alone.
func TestPredictorScoresRowByRow(t *testing.T) {
	ctx := context.Background()
	const d, n = 37, 29
	for _, method := range []projection.Method{projection.Dense, projection.Sparse} {
		t.Run(method.String(), func(t *testing.T) {
			m, err := New(Config{M: 403, P: 9, K: 120, Seed: 5, Projection: method, Lambdas: []float64{0.1, 1, 10}}, d)
			if err != nil {
				t.Fatal(err)
			}
			x, y := clusters(7, 90, d, []int{0, 1, 2, 3}, 0.7)
			if _, err := m.Learn(ctx, x, y, nil); err != nil {
				t.Fatal(err)
			}
			p := m.Predictor()
			tx, _ := clusters(8, n, d, []int{0, 1, 2, 3}, 0.9)
			all, err := p.Scores(ctx, tx)
			if err != nil {
				t.Fatal(err)
			}
			nc := p.Classes().Len()
			rev := make([]float32, 0, len(tx))
			for i := n - 1; i >= 0; i-- {
				rev = append(rev, tx[i*d:(i+1)*d]...)
			}
			back, _ := p.Scores(ctx, rev)
			for i := 0; i < n; i++ {
				one, err := p.Scores(ctx, append([]float32(nil), tx[i*d:(i+1)*d]...))
				if err != nil {
					t.Fatal(err)
				}
				if !sameFloats(one, all[i*nc:(i+1)*nc]) {
					t.Fatalf("sample %d: %v in the batch, %v alone", i, all[i*nc:(i+1)*nc], one)
				}
				if j := n - 1 - i; !sameFloats(one, back[j*nc:(j+1)*nc]) {
					t.Fatalf("sample %d: %v at row %d of the reversed batch, %v alone", i, back[j*nc:(j+1)*nc], j, one)
				}
			}
		})
	}
}

// TestPredictorScoresMatchFloat64 checks the predictor's arithmetic
// against a float64 brute force (W x, then Cᵀ h, without top-k so that no
// rounding can change which codes survive). Each float32 result may differ
// from the float64 one by the classical bound of a recursive dot product:
// for a code, d·2⁻²³·Σᵢ|Wⱼᵢxᵢ|; for a score, the codes' errors carried
// through C plus m·2⁻²³·Σⱼ|hⱼCⱼ|.
func TestPredictorScoresMatchFloat64(t *testing.T) {
	ctx := context.Background()
	const d = 41
	for _, method := range []projection.Method{projection.Dense, projection.Sparse} {
		t.Run(method.String(), func(t *testing.T) {
			cfg := Config{M: 210, P: 11, K: 210, Seed: 9, Projection: method, Lambdas: []float64{1}}
			m, err := New(cfg, d)
			if err != nil {
				t.Fatal(err)
			}
			x, y := clusters(11, 60, d, []int{0, 1, 2}, 0.5)
			if _, err := m.Learn(ctx, x, y, nil); err != nil {
				t.Fatal(err)
			}
			p := m.Predictor()
			if p.inScale != 0 && p.inScale != 1 {
				t.Fatalf("input scale %g: the brute force below assumes none", p.inScale)
			}
			tx, _ := clusters(12, 13, d, []int{0, 1, 2}, 0.8)
			got, err := p.Scores(ctx, tx)
			if err != nil {
				t.Fatal(err)
			}
			w := m.w.Dense()
			nc := p.Classes().Len()
			const u = 0x1p-23
			for i := 0; i < len(tx)/d; i++ {
				h, herr := make([]float64, cfg.M), make([]float64, cfg.M)
				for j := range h {
					var mag float64
					for l := 0; l < d; l++ {
						v := float64(w[j*d+l]) * float64(tx[i*d+l])
						h[j] += v
						mag += math.Abs(v)
					}
					herr[j] = float64(d) * u * mag
				}
				for c := 0; c < nc; c++ {
					var s, tol float64
					for j, hv := range h {
						cv := float64(p.coef[c*cfg.M+j])
						s += hv * cv
						tol += herr[j]*math.Abs(cv) + float64(cfg.M)*u*math.Abs(hv*cv)
					}
					if g := float64(got[i*nc+c]); math.Abs(g-s) > tol {
						t.Errorf("sample %d class %d: %v, float64 %v (bound %g)", i, c, g, s, tol)
					}
				}
			}
		})
	}
}

// ExamplePredictor_Scores shows that a sample scores the same alone and
// in a batch.
func ExamplePredictor_Scores() {
	ctx := context.Background()
	m, _ := New(Config{M: 300, P: 6, K: 90, Lambdas: []float64{1}}, 8)
	x, y := clusters(1, 40, 8, []int{0, 1}, 0.3)
	m.Learn(ctx, x, y, nil)
	p := m.Predictor()
	batch, _ := p.Scores(ctx, x[:3*8])
	alone, _ := p.Scores(ctx, x[8:16])
	fmt.Println(sameFloats(batch[2:4], alone))
	// Output: true
}
