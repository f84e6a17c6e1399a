package ridge

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/flycl/flycl/linalg"
	"gonum.org/v1/gonum/mat"
)

// svdGCV is the explicit definition of GCV in float64 on the data: thin
// SVD H = U Σ Vᵀ, Ŷ = U diag(s²/(s²+λ)) Uᵀ Y, RSS = ‖Y − Ŷ‖² summed
// element by element, df = Σ s²/(s²+λ).
func svdGCV(t *testing.T, h []float32, n, m int, labels []int, nc int, grid []float64) (scores, rsss, ccs []float64) {
	t.Helper()
	var svd mat.SVD
	if !svd.Factorize(dense64(h, n, m), mat.SVDThin) {
		t.Fatal("SVD failed")
	}
	var u mat.Dense
	svd.UTo(&u)
	s := svd.Values(nil)
	y := oneHot(labels, nc)
	var uty mat.Dense
	uty.Mul(u.T(), y)
	out := make([]float64, len(grid))
	rsss = make([]float64, len(grid))
	ccs = make([]float64, len(grid))
	for gi, lambda := range grid {
		f := mat.NewDense(len(s), nc, nil)
		df := 0.0
		for i, sv := range s {
			w := sv * sv / (sv*sv + lambda)
			df += w
			for c := 0; c < nc; c++ { // C = V diag(s/(s²+λ)) UᵀY
				v := sv / (sv*sv + lambda) * uty.At(i, c)
				ccs[gi] += v * v
			}
			for c := 0; c < nc; c++ {
				f.Set(i, c, w*uty.At(i, c))
			}
		}
		var yhat mat.Dense
		yhat.Mul(&u, f)
		rss := 0.0
		for i := 0; i < n; i++ {
			for c := 0; c < nc; c++ {
				d := y.At(i, c) - yhat.At(i, c)
				rss += d * d
			}
		}
		rsss[gi] = rss
		den := 1 - df/float64(n)
		out[gi] = rss / float64(n) / (den * den)
	}
	return out, rsss, ccs
}

// sparseCodes keeps the k largest values of each row of h (zeroing the
// rest) and shifts them positive, like Fly-CL's signed top-k codes.
func sparseCodes(h []float32, n, m, k int) {
	for i := 0; i < n; i++ {
		row := h[i*m : (i+1)*m]
		// threshold = k-th largest by selection on a copy
		c := append([]float32(nil), row...)
		for a := 0; a < k; a++ {
			b := a
			for j := a + 1; j < m; j++ {
				if c[j] > c[b] {
					b = j
				}
			}
			c[a], c[b] = c[b], c[a]
		}
		th := c[k-1]
		for j, v := range row {
			if v < th {
				row[j] = 0
			}
		}
	}
}

// TestGCVFromStatisticsMatchesSVD checks the GCV computed from statistics
// alone (float64 Stats, and the float32 Accumulator for --gcv-scope all)
// against the explicit SVD definition on the concatenated data, for
// n < m, n = m and n > m, dense and sparse (top-k) codes.
//
// Tolerance, from conditioning: errors ΔG (‖ΔG‖₂ ≤ δ = ε‖G‖₂) and ΔS
// (‖ΔS‖_F ≤ ε‖S‖_F) change the fitted part F = tr SᵀC + λ‖C‖² by at most
// 3δ‖C‖²_F + 4ε‖S‖_F‖C‖_F to first order, and each term λ/(σ+λ) of 1−df/n
// by at most δ/λ relative, so the score is within (that + rounding)/RSS +
// 2δ/λ relative; ε is 4(m+16)·2⁻⁵³ for float64 statistics (Householder
// backward error) and adds 2·√n·2⁻²⁴ for the float32 accumulator; ‖C‖_F
// comes from the SVD. The test allows twice that. A score is +Inf (not
// determinable) by design when the bound reaches the residual itself;
// the test checks that this happens only where the true residual is
// within 4× the bound, and that both pick the SVD's argmin.
func TestGCVFromStatisticsMatchesSVD(t *testing.T) {
	grid := []float64{1e-2, 1e-1, 1, 10, 100, 1e3, 1e4, 1e5, 1e6}
	for _, tc := range []struct {
		n, m, nc, k int
	}{
		{30, 60, 3, 0}, {60, 60, 4, 0}, {150, 60, 5, 0},
		{40, 80, 4, 20}, {80, 80, 4, 20}, {200, 80, 5, 20},
	} {
		t.Run(fmt.Sprintf("n%d_m%d_k%d", tc.n, tc.m, tc.k), func(t *testing.T) {
			h, labels := classData(uint64(tc.n*7+tc.m), tc.n, tc.m, tc.nc)
			if tc.k > 0 {
				sparseCodes(h, tc.n, tc.m, tc.k)
			}
			want, wantRSS, wantCC := svdGCV(t, h, tc.n, tc.m, labels, tc.nc, grid)

			st, _ := NewStats(tc.m)
			acc, _ := NewAccumulator(tc.m)
			// feed in three uneven chunks
			for _, cut := range [][2]int{{0, tc.n / 3}, {tc.n / 3, tc.n/3 + 1}, {tc.n/3 + 1, tc.n}} {
				lo, hi := cut[0], cut[1]
				if err := st.Add(h[lo*tc.m:hi*tc.m], hi-lo, labels[lo:hi]); err != nil {
					t.Fatal(err)
				}
				if err := acc.Add(h[lo*tc.m:hi*tc.m], hi-lo, labels[lo:hi]); err != nil {
					t.Fatal(err)
				}
			}
			// Both reductions of G: tridiagonal, and band (forced here at
			// small m; used from m > bandStatsMin).
			for _, red := range []struct {
				name    string
				bandMin int
			}{{"tridiagonal", math.MaxInt}, {"band", 0}} {
				if red.bandMin == 0 && !linalg.HaveBandReduction {
					continue
				}
				got64, err := st.gcv(context.Background(), grid, red.bandMin)
				if err != nil {
					t.Fatal(err)
				}
				got32, err := acc.gcvAllWith(context.Background(), nil, 0, nil, grid, red.bandMin)
				if err != nil {
					t.Fatal(err)
				}
				if b, w := BestLambda(got64), BestLambda(want); b != w {
					t.Errorf("%s: float64 statistics choose λ=%g, SVD %g\n got %v\nwant %v", red.name, grid[b], grid[w], got64, want)
				}
				if b, w := BestLambda(got32), BestLambda(want); b != w {
					t.Errorf("%s: float32 accumulator chooses λ=%g, SVD %g\n got %v\nwant %v", red.name, grid[b], grid[w], got32, want)
				}
				norm := maxEig(t, h, tc.n, tc.m)
				for gi, lambda := range grid {
					for _, v := range []struct {
						name string
						got  float64
						eps  float64
					}{{"float64", got64[gi], statsRelErr(tc.m)}, {"float32", got32[gi], accRelErr(tc.n, tc.m)}} {
						dl := v.eps * norm / lambda
						yy := float64(tc.n)
						rss := wantRSS[gi]
						fit := yy - rss
						sNorm := 0.0
						for _, v := range st.S {
							sNorm += v * v
						}
						sNorm = math.Sqrt(sNorm)
						cc := wantCC[gi]
						bound := 3*v.eps*norm*cc + 4*v.eps*sNorm*math.Sqrt(cc) + 8*float64(tc.m)*u64*(yy+fit)
						if math.IsInf(v.got, 1) {
							if rss > 4*bound {
								t.Errorf("%s %s: λ=%g reported not determinable, but the residual %g is well above the rounding bound %g", red.name, v.name, lambda, rss, bound)
							}
							continue
						}
						tol := 2 * (bound/rss + 2*dl)
						if rel := math.Abs(v.got-want[gi]) / want[gi]; rel > tol {
							t.Errorf("%s %s: λ=%g: score %.12g, SVD %.12g (relative error %.2g > %.2g)", red.name, v.name, lambda, v.got, want[gi], rel, tol)
						}
					}
				}
			}
		})
	}
}

func maxEig(t *testing.T, h []float32, n, m int) float64 {
	var svd mat.SVD
	if !svd.Factorize(dense64(h, n, m), mat.SVDNone) {
		t.Fatal("SVD failed")
	}
	s := svd.Values(nil)[0]
	return s * s
}

// TestGCVStatsBandEdgeSizes checks the band reduction against the
// tridiagonal one where TestGCVFromStatisticsMatchesSVD does not reach:
// tiny m (m = 2 is dsytrd_sy2sb's quick return, kd = 1 < m always) and the
// production band width kd = BandWidth (m ≥ 4·BandWidth).
func TestGCVStatsBandEdgeSizes(t *testing.T) {
	if !linalg.HaveBandReduction {
		t.Skip("pure-Go backend: no band reduction")
	}
	grid := []float64{1, 100, 1e4}
	for _, m := range []int{2, 3, 5, 17, 4*BandWidth + 44} {
		for _, n := range []int{1, m / 2, 2*m + 3} {
			if n < 1 {
				continue
			}
			h, labels := classData(uint64(7*m+n), n, m, 3)
			st, _ := NewStats(m)
			if err := st.Add(h, n, labels); err != nil {
				t.Fatal(err)
			}
			tri, err := st.gcv(context.Background(), grid, math.MaxInt)
			if err != nil {
				t.Fatal(err)
			}
			band, err := st.gcv(context.Background(), grid, 0)
			if err != nil {
				t.Fatal(err)
			}
			for i := range grid {
				a, b := tri[i], band[i]
				if math.IsInf(a, 1) != math.IsInf(b, 1) || (!math.IsInf(a, 1) && math.Abs(a-b) > 1e-5*a) {
					t.Errorf("m=%d n=%d λ=%g: tridiagonal %.12g, band %.12g", m, n, grid[i], a, b)
				}
			}
		}
	}
}
