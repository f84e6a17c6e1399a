package projection

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// normalSource draws N(0,1) values with only IEEE-754 basic operations
// (+, -, *, /, sqrt) on top of math/rand/v2's PCG, whose output is fixed by
// its specification. Every platform therefore produces the same bits for
// the same seed: the standard library's NormFloat64 and math.Log may use
// architecture-specific code and are not promised stable across releases.
type normalSource struct {
	pcg   *rand.PCG
	spare float64
	has   bool
}

func newNormalSource(seed uint64, stream uint64) *normalSource {
	return &normalSource{pcg: rand.NewPCG(seed, stream)}
}

// uniform returns a float64 in [0,1) from the top 53 bits of the generator.
func (s *normalSource) uniform() float64 {
	return float64(s.pcg.Uint64()>>11) * 0x1p-53
}

// intn returns a uniform integer in [0,n) by Lemire's unbiased method.
func (s *normalSource) intn(n int) int {
	bound := uint64(n)
	for {
		hi, lo := mulHiLo(s.pcg.Uint64(), bound)
		if lo >= bound || lo >= (-bound)%bound {
			return int(hi)
		}
	}
}

// mulHiLo returns the 128-bit product of a and b (math/bits.Mul64: an
// instruction where the CPU has one, exact everywhere).
func mulHiLo(a, b uint64) (hi, lo uint64) { return bits.Mul64(a, b) }

// norm returns a standard normal value (Marsaglia's polar method).
func (s *normalSource) norm() float64 {
	if s.has {
		s.has = false
		return s.spare
	}
	for {
		u := float64(2*s.uniform() - 1)
		v := float64(2*s.uniform() - 1)
		q := float64(u*u) + float64(v*v)
		if q == 0 || q >= 1 {
			continue
		}
		f := math.Sqrt(float64(-2*portableLog(q)) / q)
		s.spare = float64(v * f)
		s.has = true
		return float64(u * f)
	}
}

// normals fills out with the values successive calls of norm give (the
// same bits, and the generator left as they leave it), faster: the
// accepted pairs (u, v, q) are drawn first, then their logarithms and
// square roots taken two pairs at a time (unitLog2) in a loop without the
// rejection's branches, so that one pair's arithmetic overlaps the
// other's. pairs is scratch (returned, grown as needed).
func (s *normalSource) normals(out []float32, pairs []float64) []float64 {
	if s.has && len(out) > 0 {
		s.has = false
		out[0] = float32(s.spare)
		out = out[1:]
	}
	n := (len(out) + 1) / 2
	pairs = pairs[:0]
	for len(pairs) < 3*n {
		u := float64(2*s.uniform() - 1)
		v := float64(2*s.uniform() - 1)
		q := float64(u*u) + float64(v*v)
		if q == 0 || q >= 1 {
			continue
		}
		pairs = append(pairs, u, v, q)
	}
	i := 0
	for ; i+1 < n; i += 2 {
		// two pairs at once: their logarithms' series overlap
		u0, v0, q0 := pairs[3*i], pairs[3*i+1], pairs[3*i+2]
		u1, v1, q1 := pairs[3*i+3], pairs[3*i+4], pairs[3*i+5]
		l0, l1 := unitLog2(q0, q1)
		f0 := math.Sqrt(float64(-2*l0) / q0)
		f1 := math.Sqrt(float64(-2*l1) / q1)
		out[2*i], out[2*i+1] = float32(float64(u0*f0)), float32(float64(v0*f0))
		out[2*i+2] = float32(float64(u1 * f1))
		if 2*i+3 < len(out) {
			out[2*i+3] = float32(float64(v1 * f1))
		} else {
			s.spare, s.has = float64(v1*f1), true
		}
	}
	if i < n {
		u, v, q := pairs[3*i], pairs[3*i+1], pairs[3*i+2]
		f := math.Sqrt(float64(-2*unitLog(q)) / q)
		out[2*i] = float32(float64(u * f))
		if 2*i+1 < len(out) {
			out[2*i+1] = float32(float64(v * f))
		} else {
			s.spare, s.has = float64(v*f), true
		}
	}
	return pairs
}

// sqrtHalfMantissa is the mantissa field of float64(√2/2): a frac in
// [0.5, 1) is below √2/2 exactly when its mantissa field is below it.
const sqrtHalfMantissa = 0x6A09E667F3BCD

// unitLog is portableLog for a normal x (the q of the polar method: in
// (0, 1), a multiple of 2⁻¹⁰⁴), the same bits: its exponent and fraction
// are read from x's bits, and the fraction doubled when below √2/2
// without a branch, where portableLog's Frexp and comparison cost about
// a tenth of W's generation (the comparison goes either way at random).
func unitLog(x float64) float64 {
	frac, exp := unitFrac(x)
	return fracLog(frac, exp)
}

// unitFrac returns x's fraction in [√2/2, √2) and its exponent, for a
// normal x > 0, as portableLog's Frexp and adjustment give them.
func unitFrac(x float64) (float64, int) {
	b := math.Float64bits(x)
	m := b & (1<<52 - 1)
	low := 0
	if m < sqrtHalfMantissa {
		low = 1
	}
	return math.Float64frombits(m | uint64(1022+low)<<52), int(b>>52&0x7ff) - 1022 - low
}

// unitLog2 is unitLog of x and of y, their series summed side by side
// (each stops where unitLog's does), so that the two chains of
// divisions and additions overlap.
func unitLog2(x, y float64) (float64, float64) {
	fx, ex := unitFrac(x)
	fy, ey := unitFrac(y)
	zx := float64(fx-1) / float64(fx+1)
	zy := float64(fy-1) / float64(fy+1)
	zx2, zy2 := float64(zx*zx), float64(zy*zy)
	sx, tx, sy, ty := 0.0, zx, 0.0, zy
	lx, ly := true, true
	for k := 1; k < 60 && (lx || ly); k += 2 {
		fk := float64(k)
		if lx {
			sx = float64(sx + float64(tx/fk))
			tx = float64(tx * zx2)
			lx = !(math.Abs(tx) < 1e-20)
		}
		if ly {
			sy = float64(sy + float64(ty/fk))
			ty = float64(ty * zy2)
			ly = !(math.Abs(ty) < 1e-20)
		}
	}
	return float64(float64(ex)*math.Ln2) + float64(2*sx), float64(float64(ey)*math.Ln2) + float64(2*sy)
}

// portableLog is the natural logarithm of x > 0 computed with basic
// arithmetic only; explicit float64 conversions forbid the compiler from
// fusing multiply-adds, so the result is the same on every architecture.
// Accuracy: a few ulp, far below float32 resolution.
func portableLog(x float64) float64 {
	frac, exp := math.Frexp(x) // exact: x = frac * 2^exp, frac in [0.5,1)
	if frac < math.Sqrt2/2 {
		frac *= 2
		exp--
	}
	return fracLog(frac, exp)
}

// fracLog is log(frac · 2^exp) for frac in [√2/2, √2): log(frac) =
// 2 atanh(z), z = (frac-1)/(frac+1), |z| <= 0.1716, summed as a series
// until its term falls below 1e-20.
func fracLog(frac float64, exp int) float64 {
	z := float64(frac-1) / float64(frac+1)
	z2 := float64(z * z)
	sum, term := 0.0, z
	for k := 1; k < 60; k += 2 {
		sum = float64(sum + float64(term/float64(k)))
		term = float64(term * z2)
		if math.Abs(term) < 1e-20 {
			break
		}
	}
	return float64(float64(exp)*math.Ln2) + float64(2*sum)
}
