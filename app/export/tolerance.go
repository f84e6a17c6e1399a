package export

import (
	"fmt"
	"math"
	"sort"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/projection"
)

// unitRoundoff is float32's unit roundoff u = 2⁻²⁴.
const unitRoundoff = 1.0 / (1 << 24)

// gamma is Higham's γₙ = nu/(1-nu): a sum of n products computed in
// float32, in any order, lies within γₙ·Σ|terms| of the exact sum.
func gamma(n int) float64 { return float64(n) * unitRoundoff / (1 - float64(n)*unitRoundoff) }

// Tolerance bounds, for each of the n×d features x, how far the scores of
// an exported graph run by another runtime may lie from the scores of
// flycl.Predictor.Scores through float32 rounding: both compute the same
// products but may sum them in different orders. With h_j = Σ_i W_ji s·x_i
// (computed here in float64), a_j = Σ_i |W_ji s·x_i| (plus Σ_i |W_ji| s·dx_i
// when dx, a bound on each feature's difference between the two runtimes'
// inputs, is given) and Higham's γₙ = nu/(1−nu), u = 2⁻²⁴, each runtime's
// h_j lies within e_j = γ_p a_j of the exact one. For sample i, class c:
//
//	|score − score'| ≤ Σ_{j kept, not in U} (2e_j + 2γ_k(|h_j| + e_j)) |C_cj|
//	                 + Σ_{j in U} (|h_j| + e_j + 2γ_k(|h_j| + e_j)) |C_cj|
//
// where U holds the coordinates near the k-th key that the two runtimes'
// roundings could put on different sides of it (a kept key within e of a
// dropped one): top-k may keep one and not the other, and such a
// coordinate counts whole. Where every product and partial sum of a row is
// an integer below 2²⁴ (integer weights and inputs, a_j < 2²⁴, no dx) the
// row is exact in any order: e_j = 0, and exact ties are broken alike by
// both runtimes (the lower index first), so they are not in U.
func Tolerance(s *flycl.Snapshot, x []float32, dx []float32) ([]float64, error) {
	tol, _, _, err := tolerance(s, x, dx, false)
	return tol, err
}

// CosineTolerance bounds, for each of the n×d features x (dx as for
// Tolerance), how far the cosine of an exported graph's code to the
// nearest class sum may lie from flycl.Predictor.ScoresCosines'. With δ_j
// the bound on a coordinate of h that Tolerance's sums weigh by |C_cj|
// (the runtimes' h_j apart by at most δ_j, their products summed within
// it), the dot product with the unit row u_c of S moves by at most
// N_c = Σ_j δ_j|u_cj|, and ‖h‖ by at most Δ = √(Σ_j δ_j²) + γ_{k+1}‖h‖
// (the graph's float32 sum of squares). So the cosine, a ratio of the
// largest dot product and ‖h‖, moves by at most
//
//	(max_c N_c + |cos|·Δ) / (‖h‖ − Δ) + 4u,
//
// the last term for the float32 division and square root (+Inf when
// Δ ≥ ‖h‖: nothing is bounded).
func CosineTolerance(s *flycl.Snapshot, x []float32, dx []float32) ([]float64, error) {
	_, _, cos, err := tolerance(s, x, dx, true)
	return cos, err
}

// tolerance is Tolerance that also returns, per sample, the size of U
// and, with cosines, CosineTolerance's bounds.
func tolerance(s *flycl.Snapshot, x []float32, dx []float32, cosines bool) (tol []float64, uncertain []int, cosTol []float64, err error) {
	w := s.Projection()
	st := s.State()
	coef := s.Coef()
	nc := len(st.Labels)
	m, d, p, k := w.M, w.D, w.P, st.Config.K
	if coef == nil || nc == 0 {
		return nil, nil, nil, ErrNoClasses
	}
	if len(x)%d != 0 || (dx != nil && len(dx) != len(x)) {
		return nil, nil, nil, fmt.Errorf("export: %d features (and %d bounds) for d=%d", len(x), len(dx), d)
	}
	k = min(k, m)
	scale := inputScale(st)
	n := len(x) / d
	tol = make([]float64, n*nc)
	uncertain = make([]int, n)
	h := make([]float64, m)
	e := make([]float64, m)
	key := make([]float64, m)
	order := make([]int, m)
	inU := make([]bool, m)
	delta := make([]float64, m)
	var ut []float32
	var has []bool
	if cosines {
		cosTol = make([]float64, n)
		ut, has = unitSumsT(s.S(), m, nc)
	}
	for i := 0; i < n; i++ {
		xi := x[i*d : (i+1)*d]
		intInput := dx == nil
		for _, v := range xi {
			if float64(v)*scale != math.Trunc(float64(v)*scale) {
				intInput = false
			}
		}
		for j := 0; j < m; j++ {
			var sum, abs float64
			exact := intInput
			for q := j * p; q < (j+1)*p; q++ {
				wv := float64(w.Vals[q])
				if wv != math.Trunc(wv) {
					exact = false
				}
				t := wv * float64(xi[w.Cols[q]]) * scale
				sum += t
				abs += math.Abs(t)
				if dx != nil {
					abs += math.Abs(wv) * float64(dx[i*d+int(w.Cols[q])]) * scale
				}
			}
			h[j] = sum
			e[j] = gamma(p) * abs
			if exact && abs < 1<<24 {
				e[j] = 0
			}
			key[j] = sum
			if st.Config.TopK == projection.Magnitude {
				key[j] = math.Abs(sum)
			}
			order[j] = j
		}
		// the exact selection: largest keys, lower index first on ties
		sort.SliceStable(order, func(u, v int) bool { return key[order[u]] > key[order[v]] })
		kept := order[:k]
		uncertain[i] = markUncertain(kept, order[k:], key, e, inU)
		g := gamma(k)
		clear(delta)
		for r, j := range order {
			switch {
			case inU[j]:
				delta[j] = (math.Abs(h[j]) + e[j]) * (1 + 2*g)
			case r < k:
				delta[j] = 2*e[j] + 2*g*(math.Abs(h[j])+e[j])
			}
		}
		for c := 0; c < nc; c++ {
			row := coef[c*m : (c+1)*m]
			var t float64
			for j, dj := range delta {
				t += dj * math.Abs(float64(row[j]))
			}
			tol[i*nc+c] = t
		}
		if cosines {
			var hh, dd float64
			for _, j := range order[:k] {
				hh += h[j] * h[j]
			}
			for _, dj := range delta {
				dd += dj * dj
			}
			hn := math.Sqrt(hh)
			big := 0.0 // max_c N_c
			best := math.Inf(-1)
			for c := 0; c < nc; c++ {
				if !has[c] {
					continue
				}
				var nb, dot float64
				for _, j := range order[:k] {
					dot += h[j] * float64(ut[j*nc+c])
				}
				for j, dj := range delta {
					nb += dj * math.Abs(float64(ut[j*nc+c]))
				}
				big = max(big, nb)
				best = max(best, dot)
			}
			dl := math.Sqrt(dd) + gamma(k+1)*hn
			if dl >= hn {
				cosTol[i] = math.Inf(1)
				continue
			}
			cosTol[i] = (big+math.Abs(best/hn)*dl)/(hn-dl) + 4*unitRoundoff
		}
	}
	return tol, uncertain, cosTol, nil
}

// markUncertain sets inU for the coordinates that runtimes whose keys lie
// within e of key could keep or drop differently: a kept j and a dropped
// q whose keys come within e_j + e_q of each other, unless both are exact
// (e = 0) and j wins the exact comparison (a larger key, or an equal one
// at a lower index: the tie-break of projection.TopK and of ONNX TopK).
// It returns how many it set.
func markUncertain(kept, dropped []int, key, e []float64, inU []bool) int {
	clear(inU)
	if len(dropped) == 0 {
		return 0
	}
	lo := math.Inf(1) // smallest kept key less its error
	for _, j := range kept {
		lo = min(lo, key[j]-e[j])
	}
	hi := math.Inf(-1) // largest dropped key plus its error
	for _, q := range dropped {
		hi = max(hi, key[q]+e[q])
	}
	if lo > hi {
		return 0
	}
	// Only keys in [lo, hi] can change places.
	var ks, qs []int
	for _, j := range kept {
		if key[j]-e[j] <= hi {
			ks = append(ks, j)
		}
	}
	for _, q := range dropped {
		if key[q]+e[q] >= lo {
			qs = append(qs, q)
		}
	}
	n := 0
	for _, j := range ks {
		for _, q := range qs {
			if key[j]-e[j] > key[q]+e[q] {
				continue
			}
			if e[j] == 0 && e[q] == 0 && (key[j] > key[q] || (key[j] == key[q] && j < q)) {
				continue
			}
			for _, v := range []int{j, q} {
				if !inU[v] {
					inU[v] = true
					n++
				}
			}
		}
	}
	return n
}
