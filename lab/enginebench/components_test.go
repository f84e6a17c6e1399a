package enginebench

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestKFoldCVMatchesBruteForce checks the vanilla ridge selection against
// float64 solves with gonum on each fold.
func TestKFoldCVMatchesBruteForce(t *testing.T) {
	const n, m, nc, folds = 40, 25, 3, 4
	r := rand.New(rand.NewPCG(2, 2))
	h := make([]float32, n*m)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		y[i] = i % nc
		for j := 0; j < m; j++ {
			h[i*m+j] = float32(r.NormFloat64() + float64(y[i]*j%3))
		}
	}
	grid := []float64{0.01, 1, 100, 1e4}
	got, err := kFoldCV(context.Background(), h, n, m, y, nc, grid, folds)
	if err != nil {
		t.Fatal(err)
	}
	mse := make([]float64, len(grid))
	for f := 0; f < folds; f++ {
		lo, hi := f*n/folds, (f+1)*n/folds
		var rows []int
		for i := 0; i < n; i++ {
			if i < lo || i >= hi {
				rows = append(rows, i)
			}
		}
		htr := mat.NewDense(len(rows), m, nil)
		ytr := mat.NewDense(len(rows), nc, nil)
		for a, i := range rows {
			for j := 0; j < m; j++ {
				htr.Set(a, j, float64(h[i*m+j]))
			}
			ytr.Set(a, y[i], 1)
		}
		for gi, l := range grid {
			var g mat.Dense
			g.Mul(htr.T(), htr)
			for j := 0; j < m; j++ {
				g.Set(j, j, g.At(j, j)+l)
			}
			var s, c mat.Dense
			s.Mul(htr.T(), ytr)
			if err := c.Solve(&g, &s); err != nil {
				t.Fatal(err)
			}
			for i := lo; i < hi; i++ {
				for cl := 0; cl < nc; cl++ {
					var p float64
					for j := 0; j < m; j++ {
						p += float64(h[i*m+j]) * c.At(j, cl)
					}
					tv := 0.0
					if y[i] == cl {
						tv = 1
					}
					mse[gi] += (p - tv) * (p - tv)
				}
			}
		}
	}
	want := 0
	for i, v := range mse {
		if v < mse[want] {
			want = i
		}
	}
	if got != want {
		t.Errorf("k-fold CV picks λ=%g, brute force %g (MSEs %v)", grid[got], grid[want], mse)
	}
	if math.IsInf(mse[want], 0) {
		t.Fatal("brute force failed")
	}
}

// TestComponentsAgree runs the benchmark at a toy size: the vanilla and
// Fly-CL forms must compute the same thing (LU = Cholesky, sparse = dense
// similarity), which the notes report, and every time must be positive.
func TestComponentsAgree(t *testing.T) {
	cs := ComponentSettings{Scale: Scale{"toy", 2, 60, 4, 32}, M: 200, P: 8, K: 60, Lambdas: []float64{1, 100, 1e4}, Folds: 3, Runs: 1, TestPerCls: 5}
	comps, err := Components(context.Background(), cs, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(comps) != 4 {
		t.Fatalf("%d components, want 4", len(comps))
	}
	for _, c := range comps {
		if c.VanillaTime <= 0 || c.OptTime <= 0 || c.VanillaFlops < c.OptFlops {
			t.Errorf("%+v", c)
		}
	}
	var rel float64
	if _, err := fmtSscan(comps[2].Note, "‖C_LU − C_chol‖/‖C‖ = %g", &rel); err != nil || rel > 1e-3 {
		t.Errorf("LU vs Cholesky: %q", comps[2].Note)
	}
	if _, err := fmtSscan(comps[3].Note, "max score difference %g (relative)", &rel); err != nil || rel > 1e-4 {
		t.Errorf("sparse vs dense similarity: %q", comps[3].Note)
	}
}

func fmtSscan(s, format string, v *float64) (int, error) { return fmt.Sscanf(s, format, v) }
