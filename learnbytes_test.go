package flycl

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/flycl/flycl/linalg"
	"github.com/flycl/flycl/reject"
	"github.com/flycl/flycl/ridge"
)

// TestLearnBytesBound: the bytes a Learn allocates (the runtime's count,
// MemStats.TotalAlloc, so an upper bound of what it holds at once) are at
// most LearnBytes plus the model's own size allowance (modelAllowance),
// for every GCV method and scope, with and without calibration, on tasks
// whose memory is ruled by each term: many one-sample classes (n·classes),
// many samples of few classes (n·m), n < m (the dual forms' n×n), a model
// that already holds many classes, and a forced dual or eigen method on
// n > m.
func TestLearnBytesBound(t *testing.T) {
	if testing.Short() {
		t.Skip("learns a few thousand samples for each GCV method")
	}
	type shape struct{ n, classes, m, prior int }
	shapes := []shape{
		{1000, 1000, 64, 0}, // one sample per class: n·classes
		{3000, 2, 64, 0},    // n ≫ m
		{300, 2, 512, 0},    // n < m
		{200, 200, 256, 0},  // n < m, one sample per class
		{2, 2, 64, 1000},    // a small task on a model of many classes
		{100, 2, 256, 300},
		{20000, 2, 128, 0}, // n·m (not with a forced dual or eigen: n×n)
	}
	methods := []ridge.GCVMethod{ridge.GCVAuto, ridge.GCVDual, ridge.GCVPrimal, ridge.GCVEigen, ridge.GCVBand}
	for _, meth := range methods {
		for _, scope := range []GCVScope{GCVTask, GCVAll} {
			for _, s := range shapes {
				if s.n > 10*s.m && (meth == ridge.GCVDual || meth == ridge.GCVEigen) {
					continue
				}
				name := fmt.Sprintf("%v/%v/n=%d,c=%d,m=%d,prior=%d", meth, scope, s.n, s.classes, s.m, s.prior)
				t.Run(name, func(t *testing.T) {
					if meth == ridge.GCVBand && !linalg.HaveBandReduction {
						t.Skip("pure-Go backend: no band reduction")
					}
					cfg := DefaultConfig()
					cfg.M, cfg.P, cfg.K = s.m, 4, s.m/4
					cfg.GCV, cfg.GCVScope = meth, scope
					const d = 16
					m, err := New(cfg, d)
					if err != nil {
						t.Fatal(err)
					}
					if err := m.SetCalibration(&reject.Calibration{}); err != nil {
						t.Fatal(err)
					}
					r := rand.New(rand.NewPCG(1, 2))
					task := func(n, classes, first int) ([]float32, []int) {
						x := make([]float32, n*d)
						for i := range x {
							x[i] = r.Float32()
						}
						y := make([]int, n)
						for i := range y {
							y[i] = first + i%classes
						}
						return x, y
					}
					if s.prior > 0 {
						x, y := task(s.prior, s.prior, 1_000_000)
						if _, err := m.Learn(context.Background(), x, y, nil); err != nil {
							t.Fatal(err)
						}
					}
					x, y := task(s.n, s.classes, 0)
					bound := m.LearnBytes(s.n, s.classes) + modelAllowance(s.m, m.Classes().Len()+s.classes)
					var before, after runtime.MemStats
					runtime.ReadMemStats(&before)
					_, err = m.Learn(context.Background(), x, y, nil)
					runtime.ReadMemStats(&after)
					if err != nil {
						t.Fatal(err)
					}
					got := int64(after.TotalAlloc - before.TotalAlloc)
					t.Logf("allocated %.1f MB, %.0f%% of the bound", float64(got)/1e6, 100*float64(got)/float64(bound))
					if got > bound {
						t.Errorf("Learn allocated %d bytes, more than the bound %d (LearnBytes %d)", got, bound, m.LearnBytes(s.n, s.classes))
					}
				})
			}
		}
	}
}

// modelAllowance is what LearnBytes leaves out, the model's own size: the
// m×m statistics, their factor and GCV's m×m forms in float32 and float64
// (48 bytes an element in all), a copy of the classifier and of S (48
// bytes a class and dimension), and 8 MiB for the small rest.
func modelAllowance(m, classes int) int64 {
	return 48*int64(m)*int64(m) + 48*int64(classes)*int64(m) + 8<<20
}

// TestCheckLearnBytes: the limit refuses a learn whose bound is over it,
// as a *MemoryError that is input (IsInput) naming the sizes; the bound
// grows with the square of the classes of one-sample classes; no limit
// refuses nothing; a huge request saturates instead of overflowing.
func TestCheckLearnBytes(t *testing.T) {
	cfg := DefaultConfig()
	cfg.M, cfg.P, cfg.K = 64, 4, 16
	m, err := New(cfg, 8)
	if err != nil {
		t.Fatal(err)
	}
	small, big := m.LearnBytes(1000, 1000), m.LearnBytes(4000, 4000)
	if big < 12*small { // 16× in the n·classes term, 4× in the others
		t.Errorf("LearnBytes(4000 one-sample classes) = %d, not ≥ 12× LearnBytes(1000) = %d", big, small)
	}
	if err := m.CheckLearnBytes(50_000, 50_000, 0); err != nil {
		t.Errorf("no limit: %v", err)
	}
	if err := m.CheckLearnBytes(1000, 1000, small); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	err = m.CheckLearnBytes(50_000, 50_000, 512<<20)
	var me *MemoryError
	if !errors.As(err, &me) || !IsInput(err) || me.Samples != 50_000 || me.Classes != 50_000 || me.M != 64 || me.Limit != 512<<20 || me.Bytes <= me.Limit {
		t.Fatalf("50,000 one-sample classes: %#v (%v)", err, err)
	}
	if got := m.LearnBytes(1<<40, 1<<40); got != 1<<63-1 {
		t.Errorf("LearnBytes(2^40, 2^40) = %d, want saturated", got)
	}
}
