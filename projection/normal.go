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
	// log(frac) = 2 atanh(z), z = (frac-1)/(frac+1), |z| <= 0.1716
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
