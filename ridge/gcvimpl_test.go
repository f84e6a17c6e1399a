package ridge

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/flycl/flycl/linalg"
)

// shiftedImpl is one implementation of shifted, built for the symmetric
// a (order r, row-major, full) with the nrhs rows of rhs (each of length
// r) expressed in its basis: the factorisation and those rows, as a
// shifted[float32] and []float32 or a shifted[float64] and []float64.
type shiftedImpl struct {
	name  string
	u     float64 // unit roundoff of its arithmetic
	band  bool    // needs LAPACK's band reduction
	build func(a []float64, r int, rhs []float64, nrhs int) (f, rows any, err error)
}

var shiftedImpls = []shiftedImpl{
	{name: "dense float32", u: u32, build: func(a []float64, r int, rhs []float64, nrhs int) (any, any, error) {
		return shifted[float32](newDense(to32(a), r)), to32(rhs), nil
	}},
	{name: "dense float64", u: u64, build: func(a []float64, r int, rhs []float64, nrhs int) (any, any, error) {
		return shifted[float64](newDense(slices.Clone(a), r)), slices.Clone(rhs), nil
	}},
	{name: "eigen", u: u64, build: func(a []float64, r int, rhs []float64, nrhs int) (any, any, error) {
		rows := slices.Clone(rhs)
		f, err := eigenOf(slices.Clone(a), r, rows, nrhs)
		return shifted[float64](f), rows, err
	}},
	{name: "tridiagonal", u: u64, build: func(a []float64, r int, rhs []float64, nrhs int) (any, any, error) {
		rows := slices.Clone(rhs)
		f, err := reduceTridiag(slices.Clone(a), r, rows, nrhs)
		return shifted[float64](f), rows, err
	}},
	{name: "band", u: u64, band: true, build: func(a []float64, r int, rhs []float64, nrhs int) (any, any, error) {
		f, rows, _, err := reduceBand(slices.Clone(a), r, slices.Clone(rhs), nrhs)
		return shifted[float64](f), rows, err
	}},
	{name: "band reduced in float32", u: u32, band: true, build: func(a []float64, r int, rhs []float64, nrhs int) (any, any, error) {
		f, rows, _, err := reduceToBand(to32(a), r, min(BandWidth, r-1), to32(rhs), nrhs)
		return shifted[float64](f), rows, err
	}},
}

// to32 rounds v to float32.
func to32(v []float64) []float32 {
	w := make([]float32, len(v))
	for i, x := range v {
		w[i] = float32(x)
	}
	return w
}

// implScorer puts the scorer kind ("dual" or "primal", the latter from
// statistics with the error bound of relErr) over f and its rows.
func implScorer(kind string, f, rows any, n, m, nc int, relErr, gNorm, sNorm float64) gcvScorer {
	switch f := f.(type) {
	case shifted[float32]:
		return scorerOf(kind, f, rows.([]float32), n, m, nc, relErr, gNorm, sNorm)
	case shifted[float64]:
		return scorerOf(kind, f, rows.([]float64), n, m, nc, relErr, gNorm, sNorm)
	}
	panic("unknown factorisation type")
}

func scorerOf[T float32 | float64](kind string, f shifted[T], rows []T, n, m, nc int, relErr, gNorm, sNorm float64) gcvScorer {
	if kind == "dual" {
		return newDualScorer(f, rows, n, nc)
	}
	return newPrimalScorer(f, rows, n, m, nc).fromStatistics(float64(n), relErr, gNorm, sNorm)
}

// TestGCVShiftedMatchesSVD checks every implementation of shifted under both
// scorers against the SVD closed form (svdGCV): the dual scorer on
// K = H Hᵀ and the one-hot Y, the primal scorer on G = HᵀH and S = HᵀY
// (residual from the statistics, 1 − df/n from the trace of the
// inverse), for n < m, n = m and n > m, over a grid from under- to
// over-regularised. K and G are formed in float64 from the float32
// codes (exactly but for the rounding of the sums).
//
// Tolerances, from the conditioning: an implementation working in
// precision u (2⁻²⁴ for the dense float32 one and the band reduced in
// float32, as the band method reduces the codes' K or G; 2⁻⁵³ for the
// others)
// makes relative errors of about u·κ(λ), κ(λ) = (‖A‖₂ + λ)/λ, growing
// like √d with the length d = max(n, m) of its dot products; we allow
// 4·√d·u·κ(λ), as TestGCVMatchesSVD does. The reference itself forms
// Y − Ŷ by subtraction, which costs it about √d·2⁻⁵³·n/RSS relative; we
// allow four times that. The primal 1 − df/n = (n − m + λ tr)/n cancels
// the m − n null-space terms when n < m, amplifying the trace's error by
// m/(n − df) (TestGCVMatchesSVD's factor). Its residual ‖Y‖² − fitted part
// is accepted by the scorer only above the first-order bound of its error
// (3‖ΔG‖‖C‖² + 4‖ΔS‖‖C‖ + the rounding of the sums, relErr = 4(m+16)·u
// of ‖G‖₂ and ‖S‖_F): the test allows twice that bound over the SVD's
// residual, and accepts +Inf only where the SVD's residual is within four
// times the bound computed from the SVD's ‖C‖ (as
// TestGCVFromStatisticsMatchesSVD does); the choice of λ must be the
// SVD's.
func TestGCVShiftedMatchesSVD(t *testing.T) {
	grid := []float64{1e-1, 1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7}
	for _, tc := range []struct{ n, m, nc int }{{60, 150, 4}, {90, 90, 3}, {150, 60, 6}} {
		h, labels := classData(uint64(tc.n*31+tc.m), tc.n, tc.m, tc.nc)
		want, wantRSS, wantCC := svdGCV(t, h, tc.n, tc.m, labels, tc.nc, grid)
		var svd mat.SVD
		if !svd.Factorize(dense64(h, tc.n, tc.m), mat.SVDNone) {
			t.Fatal("SVD failed")
		}
		sv := svd.Values(nil)
		norm := sv[0] * sv[0] // ‖K‖₂ = ‖G‖₂
		sqrtD := math.Sqrt(float64(max(tc.n, tc.m)))
		k, g := make([]float64, tc.n*tc.n), make([]float64, tc.m*tc.m)
		h64 := mat.NewDense(tc.n, tc.m, nil)
		h64.Copy(dense64(h, tc.n, tc.m))
		mat.NewDense(tc.n, tc.n, k).Mul(h64, h64.T())
		mat.NewDense(tc.m, tc.m, g).Mul(h64.T(), h64)
		y := oneHotRows[float64](labels, tc.nc, tc.n)
		s := classSums[float64](h, tc.m, labels, tc.nc) // Sᵀ
		sNorm := math.Sqrt(sumSq(s))
		for _, im := range shiftedImpls {
			if im.band && !linalg.HaveBandReduction {
				continue
			}
			for _, kind := range []string{"dual", "primal"} {
				t.Run(fmt.Sprintf("n%d_m%d/%s/%s", tc.n, tc.m, im.name, kind), func(t *testing.T) {
					relErr := 4 * float64(tc.m+16) * im.u
					a, order, rhs := k, tc.n, y // dual: K and Y
					if kind == "primal" {
						a, order, rhs = g, tc.m, s // G and S
					}
					f, rows, err := im.build(a, order, rhs, tc.nc)
					if err != nil {
						t.Fatal(err)
					}
					sc := implScorer(kind, f, rows, tc.n, tc.m, tc.nc, relErr, norm, sNorm)
					got, err := scoreGrid(context.Background(), grid, tc.n, sc)
					if err != nil {
						t.Fatal(err)
					}
					scored := slices.Clone(want) // the SVD's scores where got has one
					for i, lambda := range grid {
						kappa := (norm + lambda) / lambda
						tol := 4*sqrtD*im.u*kappa + 4*sqrtD*u64*float64(tc.n)/wantRSS[i]
						if kind == "primal" {
							if tc.n < tc.m {
								nMinusDF := 0.0 // Σ λ/(s²+λ) over the n singular values
								for _, v := range sv {
									nMinusDF += lambda / (v*v + lambda)
								}
								tol *= float64(tc.m) / nMinusDF
							}
							yy, cc := float64(tc.n), wantCC[i]
							bound := 3*relErr*norm*cc + 4*relErr*sNorm*math.Sqrt(cc) + 8*float64(tc.m)*u64*(2*yy-wantRSS[i])
							if math.IsInf(got[i], 1) {
								scored[i] = math.Inf(1)
								if wantRSS[i] > 4*bound {
									t.Errorf("λ=%g reported not determinable, but the residual %.3g is well above the bound %.3g", lambda, wantRSS[i], bound)
								}
								continue
							}
							tol += 2 * bound / wantRSS[i]
						}
						if rel := math.Abs(got[i]-want[i]) / want[i]; !(rel <= tol) {
							t.Errorf("λ=%g: GCV %.12g, SVD %.12g (relative error %.2g > %.2g)", lambda, got[i], want[i], rel, tol)
						}
					}
					if b, w := BestLambda(got), BestLambda(scored); b != w {
						t.Errorf("chooses λ=%g, SVD %g\n got %v\nwant %v", grid[b], grid[w], got, want)
					}
				})
			}
		}
	}
}
