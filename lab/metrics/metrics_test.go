package metrics

import (
	"math"
	"testing"
)

// A hand-computed example: 3 tasks with 10, 20 and 10 test samples.
//
//	a(0,0) = 9/10 = .9
//	a(1,0) = 8/10 = .8   a(1,1) = 18/20 = .9
//	a(2,0) = 6/10 = .6   a(2,1) = 16/20 = .8   a(2,2) = 10/10 = 1
//
// A_0 = .9, A_1 = .85, A_2 = .8 (mean) | pooled: .9, 26/30, 32/40 = .8
// Ā = (.9+.85+.8)/3 = .85 | pooled (.9 + .8667 + .8)/3 = .85556
// BWT = ((.6-.9) + (.8-.9))/2 = -.2
// Forgetting = ((max(.9,.8) - .6) + (.9 - .8))/2 = (.3 + .1)/2 = .2
func TestHandComputed(t *testing.T) {
	m := NewMatrix([]int{10, 20, 10})
	for _, c := range [][3]int{{0, 0, 9}, {1, 0, 8}, {1, 1, 18}, {2, 0, 6}, {2, 1, 16}, {2, 2, 10}} {
		if err := m.Set(c[0], c[1], c[2]); err != nil {
			t.Fatal(err)
		}
	}
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s = %.6f, want %.6f", name, got, want)
		}
	}
	near("A_0", m.MeanAcc(0), .9)
	near("A_1", m.MeanAcc(1), .85)
	near("A_2", m.MeanAcc(2), .8)
	near("pooled A_1", m.PooledAcc(1), 26.0/30)
	near("pooled A_2", m.PooledAcc(2), .8)
	near("Abar", m.Average(false), .85)
	near("pooled Abar", m.Average(true), (.9+26.0/30+.8)/3)
	near("A_T", m.Last(false), .8)
	near("BWT", m.BWT(), -.2)
	near("forgetting", m.Forgetting(), .2)
	if err := m.Set(0, 1, 1); err == nil {
		t.Error("upper triangle: no error")
	}
	if err := m.Set(1, 1, 21); err == nil {
		t.Error("more correct than samples: no error")
	}
}

func TestSingleTask(t *testing.T) {
	m := NewMatrix([]int{4})
	m.Set(0, 0, 3)
	if m.BWT() != 0 || m.Forgetting() != 0 || m.Average(false) != .75 {
		t.Errorf("single task: %v %v %v", m.BWT(), m.Forgetting(), m.Average(false))
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{1, 2, 3, 4})
	// sample std of 1..4 = sqrt(5/3)
	if s.Mean != 2.5 || math.Abs(s.Std-math.Sqrt(5.0/3)) > 1e-12 || s.N != 4 {
		t.Errorf("%+v", s)
	}
	if got := s.Format(2); got != "2.50 ± 1.29" {
		t.Errorf("Format: %q", got)
	}
	if one := Summarize([]float64{7}); one.Std != 0 || one.Format(1) != "7.0" {
		t.Errorf("one value: %+v", one)
	}
}
