package flycl

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/flycl/flycl/reject"
)

// TestRestoreCalibration: RestoreCalibration puts back a rejection and
// pool as Rejection and CalibrationPool returned them, bit for bit, as
// part of the caller's change (the version stays), and forgets the last
// leave-one-out scores; a rejection that does not validate or a pool that
// is too long or not finite is refused with the model unchanged.
func TestRestoreCalibration(t *testing.T) {
	ctx := context.Background()
	const d = 8
	m, _ := New(Config{M: 64, P: 4, K: 20, Seed: 2, Lambdas: []float64{1}}, d)
	if err := m.SetCalibration(&reject.Calibration{}); err != nil {
		t.Fatal(err)
	}
	x, y := clusters(1, 60, d, []int{0, 1, 2}, 0.9)
	if _, err := m.Learn(ctx, x, y, nil); err != nil {
		t.Fatal(err)
	}
	rej, pool := m.Rejection(), m.calibrationPool()
	x2, y2 := clusters(2, 40, d, []int{1, 3}, 0.9)
	if _, err := m.Learn(ctx, x2, y2, nil); err != nil {
		t.Fatal(err)
	}
	if m.Rejection() == rej {
		t.Fatal("the second learn did not change the rejection: the test would prove nothing")
	}
	v, newer, newPool := m.Version(), m.Rejection(), m.calibrationPool()
	for _, c := range []struct {
		name string
		r    reject.Rule
		pool []float32
	}{
		{"bad score", reject.Rule{Score: "median"}, pool},
		{"keep above 1", reject.Rule{Score: reject.ScoreTop, Keep: 1.5}, pool},
		{"infinite threshold", reject.Rule{Score: reject.ScoreTop, Threshold: math.Inf(1)}, pool},
		{"NaN in the pool", rej, append(slices.Clone(pool), float32(math.NaN()))},
		{"pool too long", rej, make([]float32, reject.MaxCalibrationPool+1)},
	} {
		if err := m.restoreCalibration(c.r, c.pool); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
		if m.Rejection() != newer || !slices.Equal(m.calibrationPool(), newPool) || m.Version() != v {
			t.Fatalf("%s: a refused restore changed the model", c.name)
		}
	}
	if err := m.restoreCalibration(rej, pool); err != nil {
		t.Fatal(err)
	}
	got := m.calibrationPool()
	if m.Rejection() != rej || len(got) != len(pool) || m.Version() != v {
		t.Fatalf("restored %+v (pool %d, version %d), want %+v (pool %d, version %d)", m.Rejection(), len(got), m.Version(), rej, len(pool), v)
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(pool[i]) {
			t.Fatalf("pool score %d: %v, want %v", i, got[i], pool[i])
		}
	}
	if loo, _ := m.leaveOneOut(); loo != nil {
		t.Fatal("the leave-one-out scores of the newer calibration are still there")
	}
	// the restored pool is the model's own copy
	pool[0]++
	if m.calibrationPool()[0] == pool[0] {
		t.Fatal("the model shares the caller's pool")
	}
}

// TestCalibrationSamples: reject.CalibrationSamples names the samples whose
// leave-one-out scores LeaveOneOut returns, in its order: their classes
// match, and each row equals the scores the classifier solved without
// that sample gives it (a brute-force re-solve in a model that never saw
// it, up to the float32 rounding of two solves of a well-conditioned
// system, 1e-4 here).
func TestCalibrationSamples(t *testing.T) {
	ctx := context.Background()
	const d, n, k = 8, 45, 4
	cfg := Config{M: 48, P: 4, K: 16, Seed: 3, Lambdas: []float64{1}}
	m, _ := New(cfg, d)
	if err := m.SetCalibration(&reject.Calibration{MaxSamples: k}); err != nil {
		t.Fatal(err)
	}
	x, y := clusters(5, n, d, []int{0, 1, 2}, 0.9)
	if _, err := m.Learn(ctx, x, y, &LearnOptions{Lambda: 1}); err != nil {
		t.Fatal(err)
	}
	loo, cls := m.leaveOneOut()
	sel := reject.CalibrationSamples(n, k)
	if len(sel) != k || len(cls) != k {
		t.Fatalf("%d samples named, %d leave-one-out rows; want %d", len(sel), len(cls), k)
	}
	labels := m.Classes().Labels()
	for i, s := range sel {
		if labels[cls[i]] != y[s] {
			t.Fatalf("row %d: class %d, sample %d is of class %d", i, labels[cls[i]], s, y[s])
		}
		without, _ := New(cfg, d)
		rx := append(slices.Clone(x[:s*d]), x[(s+1)*d:]...)
		ry := append(slices.Clone(y[:s]), y[s+1:]...)
		if _, err := without.Learn(ctx, rx, ry, &LearnOptions{Lambda: 1}); err != nil {
			t.Fatal(err)
		}
		want, err := without.Predictor().Scores(ctx, x[s*d:(s+1)*d])
		if err != nil {
			t.Fatal(err)
		}
		for c := range want {
			if math.Abs(float64(loo[i*len(labels)+c]-want[c])) > 1e-4 {
				t.Fatalf("sample %d class %d: leave-one-out score %g, re-solved without it %g", s, c, loo[i*len(labels)+c], want[c])
			}
		}
	}
}
