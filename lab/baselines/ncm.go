package baselines

import (
	"context"
	"fmt"
	"math"

	"github.com/flycl/flycl/internal/classindex"
)

// classMap assigns dense indices to labels in order of first appearance
// (new labels of a task in ascending order).
type classMap struct {
	labels []int
	index  map[int]int
}

func (c *classMap) add(labels []int) []int {
	if c.index == nil {
		c.index = map[int]int{}
	}
	idx, _ := classindex.Register(&c.labels, c.index, labels)
	return idx
}

func checkXY(x []float32, labels []int, d int) (int, error) {
	if d <= 0 || len(x)%d != 0 {
		return 0, fmt.Errorf("feature matrix has %d values, not a multiple of d=%d", len(x), d)
	}
	n := len(x) / d
	if n == 0 {
		return 0, fmt.Errorf("empty task")
	}
	if labels != nil && len(labels) != n {
		return 0, fmt.Errorf("%d labels for %d samples", len(labels), n)
	}
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return 0, fmt.Errorf("sample %d, feature %d is %v", i/d, i%d, v)
		}
	}
	return n, nil
}

// NCM is the nearest-class-mean classifier of SimpleCIL: each class is
// the mean of its (raw, frozen) features, and a sample is assigned to the
// class of highest cosine similarity.
type NCM struct {
	d      int
	cls    classMap
	sums   [][]float64
	counts []int
}

// NewNCM returns an empty NCM for d-dimensional features.
func NewNCM(d int) *NCM { return &NCM{d: d} }

// LearnTask adds the task's samples to the class sums.
func (m *NCM) LearnTask(_ context.Context, x []float32, labels []int) error {
	if _, err := checkXY(x, labels, m.d); err != nil {
		return fmt.Errorf("ncm: %w", err)
	}
	idx := m.cls.add(labels)
	for len(m.sums) < len(m.cls.labels) {
		m.sums = append(m.sums, make([]float64, m.d))
		m.counts = append(m.counts, 0)
	}
	for i, c := range idx {
		for j, v := range x[i*m.d : (i+1)*m.d] {
			m.sums[c][j] += float64(v)
		}
		m.counts[c]++
	}
	return nil
}

// Prototypes returns the unit-normalised class means, in class order.
func (m *NCM) Prototypes() [][]float64 {
	out := make([][]float64, len(m.sums))
	for c, s := range m.sums {
		p := make([]float64, m.d)
		var nrm float64
		for j, v := range s {
			p[j] = v / float64(m.counts[c])
			nrm += p[j] * p[j]
		}
		nrm = math.Sqrt(nrm)
		if nrm > 0 {
			for j := range p {
				p[j] /= nrm
			}
		}
		out[c] = p
	}
	return out
}

// Predict returns the label of the most cosine-similar prototype.
func (m *NCM) Predict(_ context.Context, x []float32) ([]int, error) {
	if len(m.sums) == 0 {
		return nil, fmt.Errorf("ncm: no class learned yet")
	}
	n, err := checkXY(x, nil, m.d)
	if err != nil {
		return nil, fmt.Errorf("ncm: %w", err)
	}
	protos := m.Prototypes()
	out := make([]int, n)
	for i := 0; i < n; i++ {
		row := x[i*m.d : (i+1)*m.d]
		best, bestS := 0, math.Inf(-1)
		for c, p := range protos {
			var s float64
			for j, v := range row {
				s += float64(v) * p[j]
			}
			// the sample's own norm does not change the argmax
			if s > bestS {
				best, bestS = c, s
			}
		}
		out[i] = m.cls.labels[best]
	}
	return out, nil
}
