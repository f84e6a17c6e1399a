package flycl

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
)

// ncmAccuracy is the nearest-class-mean accuracy in float64: an independent
// method that does not care about the features' scale.
func ncmAccuracy(xtr []float32, ytr []int, xte []float32, yte []int, d int) float64 {
	sums, counts := map[int][]float64{}, map[int]float64{}
	for i, y := range ytr {
		if sums[y] == nil {
			sums[y] = make([]float64, d)
		}
		for j := 0; j < d; j++ {
			sums[y][j] += float64(xtr[i*d+j])
		}
		counts[y]++
	}
	hit := 0
	for i, y := range yte {
		best, arg := math.Inf(1), -1
		for c, s := range sums {
			var dist float64
			for j := 0; j < d; j++ {
				v := float64(xte[i*d+j]) - s[j]/counts[c]
				dist += v * v
			}
			if dist < best {
				best, arg = dist, c
			}
		}
		if arg == y {
			hit++
		}
	}
	return float64(hit) / float64(len(yte))
}

// With a relative λ grid, features of any scale (even 1e20, whose Gram
// matrix overflows float32, or 1e-30, whose Gram matrix underflows) are
// learned as well as the nearest class mean learns them, over two tasks,
// with no λ at a grid edge; the absolute grid gives chance there.
func TestRelativeLambdaRecoversScaledFeatures(t *testing.T) {
	const d = 32
	for _, scale := range []float64{1e20, 1e-30, 1e6, 1} {
		xtr, ytr := scaledBlobs(1, 4, 50, d, scale)
		xte, yte := scaledBlobs(2, 4, 50, d, scale)
		ncm := ncmAccuracy(xtr, ytr, xte, yte, d)
		m, err := New(Config{M: 2000, P: 10, K: 200, LambdaScale: LambdaRelative}, d)
		if err != nil {
			t.Fatal(err)
		}
		half := len(ytr) / 2 * d // classes 0,1 then 2,3
		for task, r := range [][2]int{{0, half}, {half, len(xtr)}} {
			rec, err := m.Learn(context.Background(), xtr[r[0]:r[1]], ytr[r[0]/d:r[1]/d], nil)
			if err != nil {
				t.Fatalf("scale %g task %d: %v", scale, task+1, err)
			}
			if is := rec.LambdaIssue(); is == LambdaNotFinite || is == LambdaFlat {
				t.Errorf("scale %g task %d: λ issue %q (GCV %v)", scale, task+1, is, rec.GCV)
			}
		}
		acc, err := m.Predictor().Accuracy(context.Background(), xte, yte)
		if err != nil {
			t.Fatal(err)
		}
		if acc < ncm-0.03 {
			t.Errorf("scale %g: accuracy %.3f, nearest class mean %.3f", scale, acc, ncm)
		}
		if s := m.inputScale(); s*scale < 0.01 || s*scale > 100 {
			t.Errorf("scale %g: input scale %g does not bring the features near 1", scale, s)
		}
	}
}

// Multiplying the features by a power of two changes nothing with a
// relative grid: the same λ relative to the data, bit-identical scores.
func TestRelativeLambdaIsScaleInvariant(t *testing.T) {
	const d = 16
	x, y := scaledBlobs(3, 3, 40, d, 1)
	xs := make([]float32, len(x))
	for i, v := range x {
		xs[i] = v * 0x1p40
	}
	run := func(x []float32) ([]float32, TaskRecord) {
		m, err := New(Config{M: 500, P: 5, K: 50, LambdaScale: LambdaRelative}, d)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := m.Learn(context.Background(), x, y, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := m.Predictor().Scores(context.Background(), x)
		if err != nil {
			t.Fatal(err)
		}
		return s, rec
	}
	s1, r1 := run(x)
	s2, r2 := run(xs)
	if !slices.Equal(s1, s2) || r1.Lambda != r2.Lambda || !slices.Equal(r1.GCV, r2.GCV) {
		t.Errorf("scaled by 2^40: λ %g vs %g, scores equal %v", r1.Lambda, r2.Lambda, slices.Equal(s1, s2))
	}
	// The snapshot's predictor scales its inputs too: the predictor of
	// the model learned on xs scores xs as that of the model learned on
	// x scores x.
	pred := func(x []float32) []float32 {
		m, _ := New(Config{M: 500, P: 5, K: 50, LambdaScale: LambdaRelative}, d)
		m.Learn(context.Background(), x, y, nil)
		ps, err := m.Snapshot().Predictor().Scores(context.Background(), x)
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	if p1, p2 := pred(x), pred(xs); !slices.Equal(p1, p2) {
		t.Errorf("predictor scores of x and of x·2^40 differ")
	}
}

func TestLambdaScaleParseAndDefaults(t *testing.T) {
	for _, s := range []string{"absolute", "relative"} {
		v, err := ParseLambdaScale(s)
		if err != nil || v.String() != s {
			t.Errorf("%s: %v %v", s, v, err)
		}
	}
	if _, err := ParseLambdaScale("Relative"); err == nil {
		t.Error("bad scale: no error")
	}
	if c := (Config{LambdaScale: LambdaRelative}).withDefaults(); !slices.Equal(c.Lambdas, DefaultRelativeLambdas) {
		t.Errorf("relative default grid %v", c.Lambdas)
	}
	if c := (Config{}).withDefaults(); !slices.Equal(c.Lambdas, DefaultLambdas) {
		t.Errorf("absolute default grid %v", c.Lambdas)
	}
	for s, ok := range map[float64]bool{0: true, 1: true, 0x1p-70: true, 0.75: false, -2: false, math.Inf(1): false} {
		if validInputScale(s) != ok {
			t.Errorf("validInputScale(%g) = %v", s, !ok)
		}
	}
}

// The input scale brings the features' RMS near 1 by a power of two, but
// never past 2^127, the largest a float32 holds, which the inputs are
// multiplied by: a first task of subnormal features (RMS under
// 2^-127.5) asked for 2^128, infinite in float32, and was refused with
// a feature "+Inf" it did not hold. It now learns, at the scale 2^127.
func TestInputScaleOfTinyFeatures(t *testing.T) {
	for _, c := range []struct {
		x    float32 // every feature (the RMS)
		want float64
	}{
		{1, 1},
		{0x1p-100, 0x1p100},
		{0x1p-127, 0x1p127},
		{0x1p-128, 0x1p127},   // subnormal: 2^128 wanted
		{0x1p-149, 0x1p127},   // the least float32
		{0x1p127, 0x1p-127},   // large: no bound reached
		{0x1.fp127, 0x1p-128}, // near the largest float32
	} {
		if got := inputScaleFor([]float32{c.x, c.x, c.x}); got != c.want || math.IsInf(float64(float32(got)), 0) {
			t.Errorf("features %g: scale %g, want %g", c.x, got, c.want)
		}
	}
	const d = 16
	x, y := scaledBlobs(3, 3, 40, d, 1)
	for i := range x {
		x[i] *= 0x1p-140 // subnormal, a few bits each
	}
	m, err := New(Config{M: 500, P: 5, K: 50, LambdaScale: LambdaRelative}, d)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Learn(context.Background(), x, y, nil); err != nil {
		t.Fatalf("subnormal features: %v", err)
	}
	if m.inputScale() != 0x1p127 {
		t.Errorf("input scale %g, want 2^127", m.inputScale())
	}
	if _, err := m.Predictor().Scores(context.Background(), x); err != nil {
		t.Fatal(err)
	}
}

// A model's input scale read from outside bytes (a model file's header)
// must be one inputScaleFor can choose: a larger power of two would make
// every input infinite in float32, and a smaller one flush ordinary
// features to 0 and answer every input alike. Such a state is refused
// naming the input scale.
func TestInputScaleFromFile(t *testing.T) {
	x, y := scaledBlobs(3, 3, 10, 8, 1)
	m, err := New(Config{M: 64, P: 4, K: 16, LambdaScale: LambdaRelative}, 8)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Learn(context.Background(), x, y, nil); err != nil {
		t.Fatal(err)
	}
	snap := m.Snapshot()
	for _, c := range []struct {
		scale float64
		ok    bool
	}{
		{0, true}, {1, true}, {0x1p127, true}, {0x1p-128, true},
		{0x1p128, false}, {0x1p-129, false}, {0x1p200, false}, {0x1p-200, false}, {3, false}, {-1, false},
	} {
		st := snap.State()
		st.InputScale = c.scale
		_, err := newSnapshot(st, snap.w, slices.Clone(snap.g), slices.Clone(snap.s), snap.samples)
		if c.ok && err != nil {
			t.Errorf("scale %g: %v", c.scale, err)
		}
		if !c.ok && (err == nil || !strings.Contains(err.Error(), "input scale")) {
			t.Errorf("scale %g: %v, want an error naming the input scale", c.scale, err)
		}
	}
}
