package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/flycl/flycl/internal/codec"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/flycl/flycl"
)

// Stages are the prototype correlation matrices at the three stages of
// Fly-CL (the paper's Figure 3): the backbone features, the sparse codes
// after projection and top-k, and the ridge classifier's outputs.
type Stages struct {
	Classes   []int
	Features  *mat.Dense
	Codes     *mat.Dense
	Ridge     *mat.Dense
	MeanAbsOD [3]float64 // mean |correlation| off the diagonal, per stage
}

// MarshalJSON writes the matrices as arrays of rows (gonum's mat.Dense has
// no JSON form of its own); a correlation that does not exist (NaN: a
// constant or non-finite prototype) is null.
func (s *Stages) MarshalJSON() ([]byte, error) {
	rows := func(m *mat.Dense) [][]*float64 {
		if m == nil {
			return nil
		}
		r, c := m.Dims()
		out := make([][]*float64, r)
		for i := range out {
			out[i] = make([]*float64, c)
			for j := range out[i] {
				out[i][j] = finite(m.At(i, j))
			}
		}
		return out
	}
	return json.Marshal(struct {
		Classes                []int
		Features, Codes, Ridge [][]*float64
		MeanAbsOD              [3]*float64
	}{s.Classes, rows(s.Features), rows(s.Codes), rows(s.Ridge),
		[3]*float64{finite(s.MeanAbsOD[0]), finite(s.MeanAbsOD[1]), finite(s.MeanAbsOD[2])}})
}

// finite returns a pointer to v, or nil when v is NaN or infinite.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Correlation returns the Pearson correlation between the rows of p.
func Correlation(p [][]float64) *mat.Dense {
	n := len(p)
	c := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := stat.Correlation(p[i], p[j], nil)
			c.Set(i, j, v)
			c.Set(j, i, v)
		}
	}
	return c
}

func meanAbsOffDiag(c *mat.Dense) float64 {
	n, _ := c.Dims()
	var s float64
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i != j {
				v := c.At(i, j)
				if v < 0 {
					v = -v
				}
				s += v
			}
		}
	}
	return s / float64(n*(n-1))
}

// prototypes returns the mean row of v (n×dim) for each class.
func prototypes(v []float32, dim int, labels, classes []int) ([][]float64, error) {
	pos := make(map[int]int, len(classes))
	for i, c := range classes {
		pos[c] = i
	}
	out := make([][]float64, len(classes))
	cnt := make([]int, len(classes))
	for i := range out {
		out[i] = make([]float64, dim)
	}
	for i, l := range labels {
		k, ok := pos[l]
		if !ok {
			continue
		}
		cnt[k]++
		for j, x := range v[i*dim : (i+1)*dim] {
			out[k][j] += float64(x)
		}
	}
	for k := range out {
		if cnt[k] == 0 {
			return nil, fmt.Errorf("analysis: class %d has no samples", classes[k])
		}
		for j := range out[k] {
			out[k][j] /= float64(cnt[k])
		}
	}
	return out, nil
}

// PrototypeCorrelations computes the class prototypes of x (n×d features
// with their labels) for the given classes at each stage of the model and
// returns their correlation matrices. The ridge stage uses the score
// vectors h'ᵀC over all classes the model has learned.
func PrototypeCorrelations(ctx context.Context, m *flycl.Model, x []float32, labels, classes []int) (*Stages, error) {
	if len(classes) < 2 {
		return nil, fmt.Errorf("analysis: need at least two classes")
	}
	d := m.InputDim()
	st := &Stages{Classes: classes}
	pf, err := prototypes(x, d, labels, classes)
	if err != nil {
		return nil, err
	}
	h, err := codec.Expand(ctx, m, x)
	if err != nil {
		return nil, err
	}
	pc, err := prototypes(h, m.Config().M, labels, classes)
	if err != nil {
		return nil, err
	}
	s, err := codec.BatchPredictor(m).Scores(ctx, x)
	if err != nil {
		return nil, err
	}
	pr, err := prototypes(s, m.Classes().Len(), labels, classes)
	if err != nil {
		return nil, err
	}
	st.Features, st.Codes, st.Ridge = Correlation(pf), Correlation(pc), Correlation(pr)
	for i, c := range []*mat.Dense{st.Features, st.Codes, st.Ridge} {
		st.MeanAbsOD[i] = meanAbsOffDiag(c)
	}
	return st, nil
}
