package analysis

import (
	"math"
	"testing"
)

// Pearson correlation by its definition, for a hand-checkable case.
func TestCorrelation(t *testing.T) {
	p := [][]float64{{1, 2, 3, 4}, {2, 4, 6, 8}, {4, 3, 2, 1}, {1, 0, 1, 0}}
	c := Correlation(p)
	want := [][]float64{
		{1, 1, -1, -0.4472135955},
		{1, 1, -1, -0.4472135955},
		{-1, -1, 1, 0.4472135955},
		{-0.4472135955, -0.4472135955, 0.4472135955, 1},
	}
	for i := range want {
		for j := range want[i] {
			if math.Abs(c.At(i, j)-want[i][j]) > 1e-9 {
				t.Errorf("c[%d,%d]=%g want %g", i, j, c.At(i, j), want[i][j])
			}
		}
	}
	// off-diagonal pairs: three with |r|=1, three with |r|=0.447
	if got := meanAbsOffDiag(c); math.Abs(got-(6*1+6*0.4472135955)/12) > 1e-9 {
		t.Errorf("mean |off-diagonal| %g", got)
	}
}

func TestPrototypes(t *testing.T) {
	v := []float32{1, 2, 3, 4, 5, 6}
	p, err := prototypes(v, 2, []int{7, 9, 7}, []int{9, 7})
	if err != nil || p[0][0] != 3 || p[0][1] != 4 || p[1][0] != 3 || p[1][1] != 4 {
		t.Errorf("%v %v", p, err)
	}
	if _, err := prototypes(v, 2, []int{7, 9, 7}, []int{8}); err == nil {
		t.Error("missing class: no error")
	}
}
