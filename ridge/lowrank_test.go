package ridge

import (
	"context"
	"fmt"
	"math"
	"testing"
)

// rowsBackward64 returns, in float64, the largest over the nrhs rows x of
// x (nrhs×m) and b of ρ = ‖b − Ax‖₂ / (‖d‖₂·dᵀ|x|), d_i = √A_ii: the
// backward error DriftTolerance bounds, of the computed solutions x of
// Ax = b themselves (not of random probes).
func rowsBackward64(a []float64, m int, x []float32, b []float32, nrhs int) float64 {
	var dn float64
	for i := 0; i < m; i++ {
		dn += a[i*m+i]
	}
	var worst float64
	for r := 0; r < nrhs; r++ {
		xr, br := x[r*m:(r+1)*m], b[r*m:(r+1)*m]
		var rr, dx float64
		for i := 0; i < m; i++ {
			e := float64(br[i])
			for j := 0; j < m; j++ {
				e -= a[i*m+j] * float64(xr[j])
			}
			rr += e * e
			dx += math.Sqrt(a[i*m+i]) * math.Abs(float64(xr[i]))
		}
		if dx > 0 {
			worst = max(worst, math.Sqrt(rr)/(math.Sqrt(dn)*dx))
		}
	}
	return worst
}

// TestLowRankSequence runs a stream of learns (some adding classes), a
// downdate and more learns at one λ through AddUpdating/SubDowndating,
// keeping the classifier by UpdateSolution where it applies and by a full
// SolveRows(S) where it does not, as flycl does. After every step it checks
// against the exact statistics in float64: the classifier's own backward
// error (each class's column) within τ/2, the bound a fresh float32
// solve meets (DriftTolerance), and, after every AddUpdating, Leverages
// against hᵢᵀA⁻¹hᵢ computed in float64, within the first-order effect of
// a backward error τ·tr(A): |δa| ≤ τ·tr(A)·‖A⁻¹hᵢ‖₂².
func TestLowRankSequence(t *testing.T) {
	for _, tc := range []struct {
		realLike bool
		ratio    float64 // λ / mean ‖h‖²
	}{{false, 1e-2}, {true, 1e-2}, {false, 1e-4}, {true, 1e-4}} {
		realLike := tc.realLike
		name := map[bool]string{false: "random", true: "codes"}[realLike] + fmt.Sprintf("/λ=%g‖h‖²", tc.ratio)
		t.Run(name, func(t *testing.T) {
			const m, n0, n, steps, nc = 160, 40, 6, 14, 5
			var h []float32
			var labels []int
			if realLike {
				h, labels = codesData(t, 21, n0+n*steps, m, nc)
			} else {
				h, labels = classData(21, n0+n*steps, m, nc)
			}
			// Classes arrive over time: the base has classes 0-1 only.
			for i := 0; i < n0; i++ {
				labels[i] %= 2
			}
			var tr float64
			for _, v := range h {
				tr += float64(v) * float64(v)
			}
			// A small λ against the samples' norms is where the Woodbury
			// identity cancels most (its error grows like ‖h‖²/λ·u).
			lambda := float64(float32(tc.ratio * tr / float64(n0+n*steps)))
			ctx := context.Background()
			acc, _ := NewAccumulator(m)
			acc.SetUpdateLimit(n * steps)
			if err := acc.Add(h[:n0*m], n0, labels[:n0]); err != nil {
				t.Fatal(err)
			}
			if err := acc.Factor(ctx, lambda); err != nil {
				t.Fatal(err)
			}
			c := append([]float32(nil), acc.S()...)
			acc.SolveRows(c, acc.Classes())
			tol := DriftTolerance(m)
			var blocks [][]float32
			blocks = append(blocks, h[:n0*m])
			incremental, full := 0, 0
			for s := 0; s < steps; s++ {
				lo, hi := n0+s*n, n0+(s+1)*n
				hb, lb := h[lo*m:hi*m], labels[lo:hi]
				// take the previous block back out (at the small λ the
				// guard rightly refuses: those samples nearly alone span
				// their directions)
				remove := s == steps/2 && tc.ratio >= 1e-2
				var err error
				var up FactorUpdate
				if remove {
					prev := len(blocks) - 1
					plo := n0 + (s-1)*n
					up, err = acc.SubDowndating(blocks[prev], n, labels[plo:plo+n], lambda)
					blocks = blocks[:prev]
				} else {
					up, err = acc.AddUpdating(hb, n, lb, lambda)
					blocks = append(blocks, hb)
				}
				if err != nil {
					t.Fatal(err)
				}
				if !up.Updated {
					t.Fatalf("step %d: factor not kept: %s", s, up.Reason)
				}
				a := gram64(m, lambda, blocks...)
				// The classifier: incrementally where UpdateSolution can.
				grown := make([]float32, acc.Classes()*m)
				copy(grown, c)
				if !remove && acc.UpdateSolution(grown) {
					incremental++
					c = grown
				} else {
					full++
					c = append(c[:0:0], acc.S()...)
					acc.SolveRows(c, acc.Classes())
				}
				if rho := rowsBackward64(a, m, c, acc.S(), acc.Classes()); !(rho <= tol/2) {
					t.Fatalf("step %d: classifier backward error %.3g above τ/2 = %.3g", s, rho, tol/2)
				}
				if remove {
					if acc.Leverages() != nil {
						t.Fatalf("step %d: leverages offered after a downdate", s)
					}
					continue
				}
				lev := acc.Leverages()
				if len(lev) != n {
					t.Fatalf("step %d: %d leverages for %d samples", s, len(lev), n)
				}
				want := solve64(t, a, m, hb, n) // rows A⁻¹hᵢ
				for i := 0; i < n; i++ {
					var ex, nrm float64
					for j := 0; j < m; j++ {
						ex += float64(hb[i*m+j]) * want[i*m+j]
						nrm += want[i*m+j] * want[i*m+j]
					}
					var trA float64
					for j := 0; j < m; j++ {
						trA += a[j*m+j]
					}
					if bound := tol * trA * nrm; !(math.Abs(lev[i]-ex) <= bound) {
						t.Fatalf("step %d sample %d: leverage %.9g, exact %.9g (bound %.3g)", s, i, lev[i], ex, bound)
					}
				}
			}
			if incremental == 0 || full == 0 {
				t.Fatalf("the sequence took %d incremental and %d full solves; want both paths", incremental, full)
			}
			t.Logf("%d incremental classifier updates, %d full solves", incremental, full)
		})
	}
}

// TestUpdateSolutionRefuses: UpdateSolution and Leverages apply only right
// after an AddUpdating that kept the factor.
func TestUpdateSolutionRefuses(t *testing.T) {
	const m = 50
	h, labels := classData(4, 40, m, 3)
	ctx := context.Background()
	acc, _ := NewAccumulator(m)
	acc.Add(h[:20*m], 20, labels[:20])
	acc.Factor(ctx, 10)
	// The first update is a checked one: a full solve is asked for.
	acc.AddUpdating(h[20*m:22*m], 2, labels[20:22], 10)
	c := make([]float32, acc.Classes()*m)
	if acc.UpdateSolution(c) {
		t.Fatal("UpdateSolution on a drift-checked update")
	}
	if acc.Leverages() == nil {
		t.Fatal("no leverages after an update that kept the factor")
	}
	acc.AddUpdating(h[22*m:24*m], 2, labels[22:24], 10)
	for name, change := range map[string]func(){
		"Add":         func() { acc.Add(h[24*m:25*m], 1, labels[24:25]) },
		"RemoveClass": func() { acc.RemoveClass(2) },
		"other λ":     func() { acc.AddUpdating(h[25*m:26*m], 1, labels[25:26], 11) },
		"Factor":      func() { acc.Factor(ctx, 10) },
	} {
		acc.Factor(ctx, 10)
		acc.AddUpdating(h[26*m:28*m], 2, labels[26:28], 10)
		acc.AddUpdating(h[28*m:30*m], 2, labels[28:30], 10)
		change()
		c := make([]float32, acc.Classes()*m)
		if acc.UpdateSolution(c) || acc.Leverages() != nil {
			t.Errorf("after %s: UpdateSolution or Leverages still offered", name)
		}
	}
}
