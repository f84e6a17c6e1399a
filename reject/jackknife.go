package reject

import (
	"context"
	"math"

	"github.com/flycl/flycl/linalg"
)

// MaxJackknifePartners bounds the samples j whose leave-two-out effect the
// jackknife extrapolation of the calibration averages: its cost is two
// triangular solves per partner, about 2·MaxJackknifePartners·m² flops.
const MaxJackknifePartners = 64

// Jackknife corrects leave-one-out values toward the values a
// new sample of the same class gets from the full model. A sample i's
// leave-one-out score f₋ᵢ(xᵢ) comes from a model that learned one sample
// of i's class fewer than the model that scores a new sample of that
// class (n_c − 1 against n_c): with a few samples per class it is lower,
// and probabilities fitted on it are underconfident. The score of xᵢ
// under a model of the others and one more sample of its class is
// estimated, as the jackknife extrapolates, by adding the mean effect of
// one sample of the class on xᵢ's score:
//
//	f̂ᵢ = f₋ᵢ(xᵢ) + mean over j ≠ i of i's class of (f₋ᵢ(xᵢ) − f₋ᵢⱼ(xᵢ)),
//
// f₋ᵢⱼ the scores of the model without samples i and j (exact, a rank-two
// downdate: (I − H_BB)⁻¹(F_B − H_BB Y_B) for B = {i, j}, H the hat
// matrix, F the full model's scores, Y the one-hot targets). The same is
// done for the cosine to the nearest class sum (sums without xᵢ, and
// without xᵢ and x_j). It is an approximation: removing a sample and
// adding one have the same effect only to first order.
//
// loo (k rows of nc), full (the full model's scores of the same rows),
// lev (their leverages) and cos (their leave-one-out cosines) are those
// of the rows sel of the codes h (rows of m), learned with class indices
// idx; s holds the class sums (nc×m). hat returns hᵢᵀ(G+λI)⁻¹hⱼ for rows
// i of sel and partner rows pj (indices into sel): a k×len(pj) matrix;
// the partners are at most MaxJackknifePartners rows spread evenly over
// sel, and a row with no partner of its class is left as it is.
// Rows whose class has fewer than minCount samples (counts) are left as
// they are. It returns new slices.
func Jackknife(ctx context.Context, loo, full []float32, lev []float64, cos []float64, nc, m int,
	h []float32, sel, idx []int, s []float32, counts []int, hat func(pj []int) []float64) ([]float32, []float64, error) {
	k := len(sel)
	rows, cs := make([]float32, len(loo)), make([]float64, len(cos))
	copy(rows, loo)
	copy(cs, cos)
	if k < 2 {
		return rows, cs, nil
	}
	pj := evenly(k, MaxJackknifePartners)
	hij := hat(pj) // k × len(pj)
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	np := len(pj)
	// products for the cosines: codes · class sums, codes · partner codes
	code := func(i int) []float32 { return h[sel[i]*m : (sel[i]+1)*m] }
	pc := make([]float64, k*nc) // hᵢ·S_c
	kk := make([]float64, k)    // ‖hᵢ‖²
	kp := make([]float64, k*np) // hᵢ·h_pj
	norm2 := make([]float64, nc)
	for c := range nc {
		for _, v := range s[c*m : (c+1)*m] {
			norm2[c] += float64(v) * float64(v)
		}
	}
	// the sums run over hᵢ's non-zeros only (a top-k code is mostly
	// zeros), for all classes (all partners) at once from S (the partner
	// codes) transposed (linalg.DgatherSparse): the terms skipped are
	// exact zeros, which leave a sum that starts at +0 unchanged, and the
	// products of two float32 values are exact in float64, so each sum
	// has the bits of the dense one
	st := transposed(s, nc, m)
	pcodes := make([]float32, np*m)
	for q, j := range pj {
		copy(pcodes[q*m:(q+1)*m], code(j))
	}
	pt := transposed(pcodes, np, m)
	nz, hv := make([]int32, 0, m), make([]float32, 0, m)
	for i := range k {
		nz, hv = nz[:0], hv[:0]
		for t, v := range code(i) {
			if v != 0 {
				nz, hv = append(nz, int32(t)), append(hv, v)
			}
		}
		if nc > 0 {
			linalg.DgatherSparse(nz, hv, st, nc, pc[i*nc:(i+1)*nc])
		}
		for _, v := range hv {
			kk[i] += float64(v) * float64(v)
		}
		if np > 0 {
			linalg.DgatherSparse(nz, hv, pt, np, kp[i*np:(i+1)*np])
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	// cosTwo is the cosine of xᵢ to the nearest class sum with samples i
	// and j (partner q) taken out of their classes' sums
	cosTwo := func(i, q int) (float64, bool) {
		j := pj[q]
		ci, cj := idx[sel[i]], idx[sel[j]]
		best := math.Inf(-1)
		for c := range nc {
			num, den2 := pc[i*nc+c], norm2[c]
			if c == ci {
				num -= kk[i]
				den2 += -2*pc[i*nc+c] + kk[i]
			}
			if c == cj {
				num -= kp[i*np+q]
				den2 += -2*pc[j*nc+c] + kk[j]
				if c == ci {
					den2 += 2 * kp[i*np+q]
				}
			}
			if den2 > 1e-12*norm2[c] && kk[i] > 0 {
				best = max(best, num/math.Sqrt(den2*kk[i]))
			}
		}
		return best, !math.IsInf(best, -1)
	}
	ri, rj := make([]float64, nc), make([]float64, nc)
	delta := make([]float64, nc)
	for i := range k {
		ci := idx[sel[i]]
		if ci < len(counts) && counts[ci] >= 0 && counts[ci] < minCount {
			continue
		}
		clear(delta)
		var dcos float64
		nd, ndc := 0, 0
		for q, j := range pj {
			if j == i {
				continue
			}
			cj := idx[sel[j]]
			if cj != ci {
				continue
			}
			a, b, d := lev[i], hij[i*np+q], lev[j]
			det := (1-a)*(1-d) - b*b
			if !(det > 1e-9) {
				continue
			}
			// rows i and j of F_B − H_BB Y_B, then row i of (I − H_BB)⁻¹ times them
			for c := range nc {
				ri[c], rj[c] = float64(full[i*nc+c]), float64(full[j*nc+c])
			}
			ri[ci] -= a
			ri[cj] -= b
			rj[ci] -= b
			rj[cj] -= d
			for c := range nc {
				two := ((1-d)*ri[c] + b*rj[c]) / det
				delta[c] += float64(loo[i*nc+c]) - two
			}
			nd++
			if v, ok := cosTwo(i, q); ok {
				dcos += cos[i] - v
				ndc++
			}
		}
		if nd > 0 {
			for c := range nc {
				rows[i*nc+c] = float32(float64(loo[i*nc+c]) + delta[c]/float64(nd))
			}
		}
		if ndc > 0 {
			cs[i] = cos[i] + dcos/float64(ndc)
		}
	}
	return rows, cs, nil
}

// minCount is the fewest samples a class needs for its samples'
// leave-one-out values to calibrate on (a class's only sample left out
// leaves the class unlearned).
const minCount = 2
