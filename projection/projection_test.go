package projection

import (
	"context"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

func TestGenerateStructure(t *testing.T) {
	const m, d, p = 400, 50, 17
	w, err := Generate(m, d, p, 42)
	if err != nil {
		t.Fatal(err)
	}
	colUse := make([]int, d)
	for j := 0; j < m; j++ {
		cols := w.Cols[j*p : (j+1)*p]
		if len(cols) != p {
			t.Fatalf("row %d: %d entries", j, len(cols))
		}
		for i, c := range cols {
			if c < 0 || int(c) >= d {
				t.Fatalf("row %d: column %d out of range", j, c)
			}
			if i > 0 && cols[i-1] >= c {
				t.Fatalf("row %d: columns not distinct and ascending: %v", j, cols)
			}
			colUse[c]++
		}
		for _, v := range w.Vals[j*p : (j+1)*p] {
			if v == 0 {
				t.Fatalf("row %d has a zero value", j)
			}
		}
	}
	// Columns uniform: chi-square with d-1 = 49 dof; the 0.999 quantile is 85.4.
	exp := float64(m*p) / d
	var chi float64
	for _, c := range colUse {
		chi += (float64(c) - exp) * (float64(c) - exp) / exp
	}
	if chi > 85.4 {
		t.Errorf("column usage chi-square %.1f > 85.4: columns not uniform", chi)
	}
	// The dense form has exactly p non-zeros per row.
	dense := w.Dense()
	for j := 0; j < m; j++ {
		nz := 0
		for _, v := range dense[j*d : (j+1)*d] {
			if v != 0 {
				nz++
			}
		}
		if nz != p {
			t.Fatalf("dense row %d: %d non-zeros", j, nz)
		}
	}
}

// TestGenerateNormal checks the values against N(0,1) with the
// Kolmogorov-Smirnov statistic: for N = 200000 samples the 0.999 critical
// value is 1.95/sqrt(N) = 0.0044.
func TestGenerateNormal(t *testing.T) {
	w, err := Generate(2000, 120, 100, 7)
	if err != nil {
		t.Fatal(err)
	}
	v := make([]float64, len(w.Vals))
	var mean, sq float64
	for i, x := range w.Vals {
		v[i] = float64(x)
		mean += v[i]
		sq += v[i] * v[i]
	}
	n := float64(len(v))
	mean /= n
	variance := sq/n - mean*mean
	if math.Abs(mean) > 0.01 || math.Abs(variance-1) > 0.01 {
		t.Errorf("mean %.4f variance %.4f, want 0 and 1", mean, variance)
	}
	sort.Float64s(v)
	var ks float64
	for i, x := range v {
		cdf := 0.5 * math.Erfc(-x/math.Sqrt2)
		ks = math.Max(ks, math.Max(math.Abs(cdf-float64(i)/n), math.Abs(cdf-float64(i+1)/n)))
	}
	if ks > 1.95/math.Sqrt(n) {
		t.Errorf("KS statistic %.5f > %.5f", ks, 1.95/math.Sqrt(n))
	}
}

func TestGenerateDeterministic(t *testing.T) {
	a, _ := Generate(300, 40, 9, 5)
	b, _ := Generate(300, 40, 9, 5)
	c, _ := Generate(300, 40, 9, 6)
	if !slices.Equal(a.Cols, b.Cols) || !slices.Equal(a.Vals, b.Vals) {
		t.Fatal("same seed gave different W")
	}
	if slices.Equal(a.Vals, c.Vals) {
		t.Fatal("different seeds gave the same W")
	}
}

// TestGenerateFingerprint pins the bits of W for one seed. The generator
// is specified (PCG-DXSM, Lemire's bounded integers, Marsaglia's polar
// method with a basic-arithmetic logarithm), so this hash must be the same
// on every platform and Go release; a change here breaks every saved model
// that stores W by its seed.
func TestGenerateFingerprint(t *testing.T) {
	w, _ := Generate(64, 32, 8, 2026)
	h := fnv.New64a()
	for i := range w.Cols {
		b := math.Float32bits(w.Vals[i])
		h.Write([]byte{byte(w.Cols[i]), byte(b), byte(b >> 8), byte(b >> 16), byte(b >> 24)})
	}
	const want = 0x9e0c0af2068fe9c8
	if got := h.Sum64(); got != want {
		t.Errorf("W fingerprint %#x, want %#x", got, uint64(want))
	}
}

func TestPortableLog(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for i := 0; i < 100000; i++ {
		x := r.Float64()
		if x == 0 {
			continue
		}
		got, want := portableLog(x), math.Log(x)
		if math.Abs(got-want) > 4e-16*math.Max(1, math.Abs(want)) {
			t.Fatalf("log(%g) = %.17g want %.17g", x, got, want)
		}
	}
}

func TestGenerateErrors(t *testing.T) {
	for _, c := range [][3]int{{0, 5, 1}, {5, 0, 1}, {5, 5, 0}, {5, 5, 6}} {
		if _, err := Generate(c[0], c[1], c[2], 1); err == nil {
			t.Errorf("Generate%v: no error", c)
		}
	}
}

func TestNewValidates(t *testing.T) {
	good := []int32{0, 2, 1, 3}
	vals := []float32{1, 2, 3, 4}
	if _, err := New(2, 4, 2, good, vals); err != nil {
		t.Fatal(err)
	}
	for name, cols := range map[string][]int32{
		"repeat": {1, 1, 0, 2}, "range": {0, 4, 0, 1}, "negative": {-1, 0, 0, 1},
	} {
		if _, err := New(2, 4, 2, cols, vals); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := New(2, 4, 2, good, []float32{1, float32(math.NaN()), 3, 4}); err == nil {
		t.Error("NaN value: no error")
	}
	if _, err := FromDense(2, 3, []float32{1, 0, 2, 0, 3, 0}); err == nil {
		t.Error("FromDense with unequal row counts: no error")
	}
	w, err := FromDense(2, 3, []float32{1, 0, 2, 0, 3, 4})
	if err != nil || w.P != 2 || !slices.Equal(w.Cols, []int32{0, 2, 1, 2}) {
		t.Errorf("FromDense: %v %+v", err, w)
	}
}

func TestApplyMethodsAgree(t *testing.T) {
	const m, d, p, n = 97, 33, 7, 131
	w, _ := Generate(m, d, p, 3)
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	// float64 reference from the sparse entries
	want := make([]float64, n*m)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			var s float64
			for l := 0; l < p; l++ {
				s += float64(w.Vals[j*p+l]) * float64(x[i*d+int(w.Cols[j*p+l])])
			}
			want[i*m+j] = s
		}
	}
	for _, method := range []Method{Dense, Sparse, Auto} {
		h := make([]float32, n*m)
		if err := w.Apply(context.Background(), method, x, n, h); err != nil {
			t.Fatal(err)
		}
		for i := range h {
			if math.Abs(float64(h[i])-want[i]) > 1e-5*(1+math.Abs(want[i])) {
				t.Fatalf("%v: h[%d]=%g want %g", method, i, h[i], want[i])
			}
		}
	}
}

func TestApplyRejectsBadInput(t *testing.T) {
	w, _ := Generate(10, 4, 2, 1)
	ctx := context.Background()
	h := make([]float32, 10)
	if err := w.Apply(ctx, Dense, []float32{1, 2, 3}, 1, h); err == nil {
		t.Error("wrong dimension: no error")
	}
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
		if err := w.Apply(ctx, Dense, []float32{1, bad, 3, 4}, 1, h); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestTopKMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, tc := range []struct {
		m, k int
		mode TopKMode
		ties bool
	}{
		{100, 30, Signed, false}, {100, 30, Magnitude, false}, {1000, 1, Signed, false},
		{50, 49, Magnitude, false}, {64, 20, Signed, true}, {64, 20, Magnitude, true}, {10, 10, Signed, false},
	} {
		const n = 20
		h := make([]float32, n*tc.m)
		for i := range h {
			if tc.ties {
				h[i] = float32(r.IntN(7) - 3)
			} else {
				h[i] = float32(r.NormFloat64())
			}
		}
		orig := slices.Clone(h)
		TopK(h, n, tc.m, tc.k, tc.mode)
		for i := 0; i < n; i++ {
			row, o := h[i*tc.m:(i+1)*tc.m], orig[i*tc.m:(i+1)*tc.m]
			// reference: stable sort of indices by descending key
			idx := make([]int, tc.m)
			for j := range idx {
				idx[j] = j
			}
			sort.SliceStable(idx, func(a, b int) bool { return key(o[idx[a]], tc.mode) > key(o[idx[b]], tc.mode) })
			keep := make([]bool, tc.m)
			for _, j := range idx[:tc.k] {
				keep[j] = true
			}
			for j := range row {
				want := float32(0)
				if keep[j] {
					want = o[j]
				}
				if row[j] != want {
					t.Fatalf("%+v row %d col %d: got %g want %g", tc, i, j, row[j], want)
				}
			}
		}
	}
}

// TestApplyRowsRowIndependent: with ApplyRows a sample's code is the same
// bits alone and in a batch (split over W's rows on all CPUs when the
// product is large), dense or sparse, and agrees with Apply to float32
// rounding of a p-term sum.
func TestApplyRowsRowIndependent(t *testing.T) {
	ctx := context.Background()
	const m, d, p, n = 1001, 300, 120, 6 // n·m·d > 2^20: the batch is split, one sample is not
	w, err := Generate(m, d, p, 4)
	if err != nil {
		t.Fatal(err)
	}
	x := randCodes(n, d)
	for _, method := range []Method{Dense, Sparse} {
		h := make([]float32, n*m)
		if err := w.ApplyRows(ctx, method, x, n, h); err != nil {
			t.Fatal(err)
		}
		ref := make([]float32, n*m)
		if err := w.Apply(ctx, method, x, n, ref); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			one := make([]float32, m)
			if err := w.ApplyRows(ctx, method, append([]float32(nil), x[i*d:(i+1)*d]...), 1, one); err != nil {
				t.Fatal(err)
			}
			for j := range one {
				if math.Float32bits(one[j]) != math.Float32bits(h[i*m+j]) {
					t.Fatalf("%v: sample %d code %d: %v in the batch, %v alone", method, i, j, h[i*m+j], one[j])
				}
				// Both sum the same p products: |error| ≤ p·2⁻²³·Σ|products| each.
				var mag float64
				for k := 0; k < p; k++ {
					mag += math.Abs(float64(w.Vals[j*p+k]) * float64(x[i*d+int(w.Cols[j*p+k])]))
				}
				if diff := math.Abs(float64(one[j]) - float64(ref[i*m+j])); diff > 2*p*0x1p-23*mag {
					t.Fatalf("%v: sample %d code %d: ApplyRows %v, Apply %v", method, i, j, one[j], ref[i*m+j])
				}
			}
		}
	}
	if err := w.ApplyRows(ctx, Dense, x[:d-1], 1, make([]float32, m)); err == nil {
		t.Error("short input: no error")
	}
}

// TestGenerateMatchesReference checks Generate's columns and values, bit
// for bit, against the specification written plainly: for each row a
// fresh identity permutation, a partial Fisher-Yates shuffle of p steps,
// its first p entries sorted, then p normals. Generate reuses one
// permutation (undoing the swaps) and orders the columns by a bitset;
// the widths cover d below, at and above a multiple of 64.
func TestGenerateMatchesReference(t *testing.T) {
	for _, tc := range []struct{ m, d, p int }{{50, 1280, 300}, {40, 70, 69}, {30, 64, 64}, {30, 65, 1}, {20, 1, 1}} {
		w, err := Generate(tc.m, tc.d, tc.p, 77)
		if err != nil {
			t.Fatal(err)
		}
		for j := range tc.m {
			src := newNormalSource(77, uint64(j))
			perm := make([]int32, tc.d)
			for i := range perm {
				perm[i] = int32(i)
			}
			for i := range tc.p {
				r := i + src.intn(tc.d-i)
				perm[i], perm[r] = perm[r], perm[i]
			}
			cols := slices.Clone(perm[:tc.p])
			slices.Sort(cols)
			vals := make([]float32, tc.p)
			for i := range vals {
				vals[i] = float32(src.norm())
			}
			if !slices.Equal(cols, w.Cols[j*tc.p:(j+1)*tc.p]) || !slices.Equal(vals, w.Vals[j*tc.p:(j+1)*tc.p]) {
				t.Fatalf("m=%d d=%d p=%d: row %d differs from the reference", tc.m, tc.d, tc.p, j)
			}
		}
	}
}

// TestApplySparseSumOrder checks the sparse product bit for bit against
// its definition in float32: each value summed term by term in the order
// of W's columns (what saved models' codes and the dual form's stored
// rows rely on), for a single block of samples (W's rows split among
// workers), several blocks, and p not a multiple of the unrolling.
func TestApplySparseSumOrder(t *testing.T) {
	for _, tc := range []struct{ m, d, p, n int }{{300, 1280, 300, 15}, {97, 33, 7, 131}, {50, 40, 1, 3}, {64, 20, 6, 64}} {
		w, _ := Generate(tc.m, tc.d, tc.p, 11)
		r := rand.New(rand.NewPCG(3, 4))
		x := make([]float32, tc.n*tc.d)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		h := make([]float32, tc.n*tc.m)
		if err := w.Apply(context.Background(), Sparse, x, tc.n, h); err != nil {
			t.Fatal(err)
		}
		for i := range tc.n {
			for j := range tc.m {
				var s float32
				for l := range tc.p {
					s += w.Vals[j*tc.p+l] * x[i*tc.d+int(w.Cols[j*tc.p+l])]
				}
				if math.Float32bits(s) != math.Float32bits(h[i*tc.m+j]) {
					t.Fatalf("m=%d d=%d p=%d n=%d: h[%d][%d] = %g, the ordered sum %g", tc.m, tc.d, tc.p, tc.n, i, j, h[i*tc.m+j], s)
				}
			}
		}
	}
}
