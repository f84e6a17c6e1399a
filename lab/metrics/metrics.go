package metrics

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Matrix holds the evaluation counts of one run of T tasks: after
// training task t, Correct[t][i] of the Total[i] test samples of task i
// (i <= t) were classified correctly.
//
// A task without test samples (Total[i] == 0) has no accuracy: Acc is NaN
// for it and the summaries below leave it out.
type Matrix struct {
	Correct [][]int `json:"correct"`
	Total   []int   `json:"total"`
}

// NewMatrix returns an empty matrix for T tasks with the given test sizes.
func NewMatrix(total []int) *Matrix {
	m := &Matrix{Total: append([]int(nil), total...), Correct: make([][]int, len(total))}
	for t := range m.Correct {
		m.Correct[t] = make([]int, t+1)
	}
	return m
}

// T returns the number of tasks.
func (m *Matrix) T() int { return len(m.Total) }

// Acc returns a(t,i), the accuracy on task i after training task t (i <= t).
func (m *Matrix) Acc(t, i int) float64 {
	if m.Total[i] == 0 {
		return math.NaN()
	}
	return float64(m.Correct[t][i]) / float64(m.Total[i])
}

// Set records the evaluation of task i after training task t.
func (m *Matrix) Set(t, i, correct int) error {
	if t < 0 || t >= m.T() || i < 0 || i > t {
		return fmt.Errorf("metrics: cell (%d,%d) outside the lower triangle of %d tasks", t, i, m.T())
	}
	if correct < 0 || correct > m.Total[i] {
		return fmt.Errorf("metrics: %d correct of %d test samples", correct, m.Total[i])
	}
	m.Correct[t][i] = correct
	return nil
}

// MeanAcc returns A_t as the reference code defines it: the mean over the
// tasks seen so far of the per-task accuracies a(t,i), i <= t (over those
// with test samples; NaN if none has).
func (m *Matrix) MeanAcc(t int) float64 {
	var s float64
	k := 0
	for i := 0; i <= t; i++ {
		if m.Total[i] > 0 {
			s += m.Acc(t, i)
			k++
		}
	}
	if k == 0 {
		return math.NaN()
	}
	return s / float64(k)
}

// PooledAcc returns A_t as top-1 accuracy over all test samples of the
// tasks seen so far (tasks weighted by their test-set size).
func (m *Matrix) PooledAcc(t int) float64 {
	c, n := 0, 0
	for i := 0; i <= t; i++ {
		c += m.Correct[t][i]
		n += m.Total[i]
	}
	if n == 0 {
		return math.NaN()
	}
	return float64(c) / float64(n)
}

// Curve returns A_t for every t, by MeanAcc or PooledAcc.
func (m *Matrix) Curve(pooled bool) []float64 {
	out := make([]float64, m.T())
	for t := range out {
		if pooled {
			out[t] = m.PooledAcc(t)
		} else {
			out[t] = m.MeanAcc(t)
		}
	}
	return out
}

// Last returns A_T, the accuracy after the last task.
func (m *Matrix) Last(pooled bool) float64 {
	c := m.Curve(pooled)
	return c[len(c)-1]
}

// Average returns Ā, the mean of A_t over all tasks (over those t where
// A_t is defined; NaN if none is).
func (m *Matrix) Average(pooled bool) float64 {
	var s float64
	k := 0
	for _, v := range m.Curve(pooled) {
		if !math.IsNaN(v) {
			s += v
			k++
		}
	}
	if k == 0 {
		return math.NaN()
	}
	return s / float64(k)
}

// BWT returns backward transfer, 1/(T-1) Σ_{i<T} (a(T,i) − a(i,i)); 0 for
// a single task. Tasks without test samples are left out (NaN if that
// leaves none).
func (m *Matrix) BWT() float64 {
	T := m.T()
	if T < 2 {
		return 0
	}
	var s float64
	k := 0
	for i := 0; i < T-1; i++ {
		if m.Total[i] > 0 {
			s += m.Acc(T-1, i) - m.Acc(i, i)
			k++
		}
	}
	if k == 0 {
		return math.NaN()
	}
	return s / float64(k)
}

// Forgetting returns the average forgetting of Chaudhry et al. (2018):
// 1/(T-1) Σ_{i<T} (max_{i<=l<T-1} a(l,i) − a(T,i)); 0 for a single task.
func (m *Matrix) Forgetting() float64 {
	T := m.T()
	if T < 2 {
		return 0
	}
	var s float64
	k := 0
	for i := 0; i < T-1; i++ {
		if m.Total[i] == 0 {
			continue
		}
		k++
		best := math.Inf(-1)
		for l := i; l < T-1; l++ {
			best = math.Max(best, m.Acc(l, i))
		}
		s += best - m.Acc(T-1, i)
	}
	if k == 0 {
		return math.NaN()
	}
	return s / float64(k)
}

// Stat is a mean and sample standard deviation over runs.
// Its JSON form is {"Mean": m, "Std": s, "N": n} with null for NaN.
type Stat struct {
	Mean, Std float64
	N         int
}

// Summarize returns the mean and the sample standard deviation (n−1 in
// the denominator; 0 for a single value) of v.
func Summarize(v []float64) Stat {
	n := len(v)
	if n == 0 {
		return Stat{Mean: math.NaN(), Std: math.NaN()}
	}
	var s float64
	for _, x := range v {
		s += x
	}
	mean := s / float64(n)
	if n == 1 {
		return Stat{Mean: mean, N: 1}
	}
	var q float64
	for _, x := range v {
		q += (x - mean) * (x - mean)
	}
	return Stat{Mean: mean, Std: math.Sqrt(q / float64(n-1)), N: n}
}

// MarshalJSON writes NaN and ±Inf (no data) as null.
func (s Stat) MarshalJSON() ([]byte, error) {
	f := func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "null"
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return []byte(fmt.Sprintf(`{"Mean":%s,"Std":%s,"N":%d}`, f(s.Mean), f(s.Std), s.N)), nil
}

// UnmarshalJSON reads the form MarshalJSON writes (null as NaN).
func (s *Stat) UnmarshalJSON(b []byte) error {
	var v struct {
		Mean, Std *float64
		N         int
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Stat{Mean: math.NaN(), Std: math.NaN(), N: v.N}
	if v.Mean != nil {
		s.Mean = *v.Mean
	}
	if v.Std != nil {
		s.Std = *v.Std
	}
	return nil
}

// Format formats the stat as "mean ± std" with the given decimals, or
// "n/a" when there is no value (NaN: no run had test samples for it).
func (s Stat) Format(decimals int) string {
	if math.IsNaN(s.Mean) || math.IsInf(s.Mean, 0) {
		return "n/a"
	}
	if s.N <= 1 {
		return fmt.Sprintf("%.*f", decimals, s.Mean)
	}
	return fmt.Sprintf("%.*f ± %.*f", decimals, s.Mean, decimals, s.Std)
}
