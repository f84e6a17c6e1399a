package projection

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestUnitLogIsPortableLog: the generator's logarithms (unitLog, and
// unitLog2 of two values) have portableLog's bits (the specification) for every q the polar method
// takes: random values of (0, 1), the smallest (2⁻¹⁰⁴), powers of two,
// and the fractions either side of √2/2, where the two halve the range
// differently.
func TestUnitLogIsPortableLog(t *testing.T) {
	xs := []float64{0x1p-104, 0x1p-52, 0.5, 0.25, math.Nextafter(1, 0), math.Sqrt2 / 2}
	for _, b := range []float64{math.Sqrt2 / 2, math.Sqrt2 / 4, math.Sqrt2 / 2 * 0x1p-40} {
		x := b
		for range 4 {
			x = math.Nextafter(x, 0)
			xs = append(xs, x)
		}
		x = b
		for range 4 {
			x = math.Nextafter(x, 1)
			xs = append(xs, x)
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 200000 {
		u, v := 2*r.Float64()-1, 2*r.Float64()-1
		if q := u*u + v*v; q > 0 && q < 1 {
			xs = append(xs, q)
		}
	}
	for i, x := range xs {
		if got, want := unitLog(x), portableLog(x); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("unitLog(%v) = %v, portableLog %v", x, got, want)
		}
		// side by side with another (its series longer or shorter)
		y := xs[(i*7919+1)%len(xs)]
		gx, gy := unitLog2(x, y)
		if wx, wy := portableLog(x), portableLog(y); math.Float64bits(gx) != math.Float64bits(wx) || math.Float64bits(gy) != math.Float64bits(wy) {
			t.Fatalf("unitLog2(%v, %v) = %v, %v; portableLog %v, %v", x, y, gx, gy, wx, wy)
		}
	}
}

// TestNormalsAreNorm: normals gives the values successive calls of norm
// give, bit for bit, for odd and even counts (an odd or even number of
// pairs), split over several calls (a spare carried from one to the
// next) and in one.
func TestNormalsAreNorm(t *testing.T) {
	ref := newNormalSource(3, 4)
	want := make([]float32, 1001)
	for i := range want {
		want[i] = float32(ref.norm())
	}
	src := newNormalSource(3, 4)
	got := make([]float32, 0, len(want))
	var pairs []float64
	for _, n := range []int{1, 2, 7, 300, 1, 3, 4, 5, 678} { // 1001 in all
		out := make([]float32, n)
		pairs = src.normals(out, pairs)
		got = append(got, out...)
	}
	if !sameBits(got, want) {
		t.Fatal("normals differ from successive norm calls")
	}
	one := make([]float32, len(want))
	newNormalSource(3, 4).normals(one, nil)
	if !sameBits(one, want) {
		t.Fatal("normals in one call differ from successive norm calls")
	}
}

func sameBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}
