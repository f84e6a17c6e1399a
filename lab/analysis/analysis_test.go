package analysis

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
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

// The JSON form keeps every matrix entry (mat.Dense alone marshals as {}).
func TestStagesJSON(t *testing.T) {
	c := Correlation([][]float64{{1, 2, 3}, {3, 1, 2}, {0, 5, 1}})
	st := &Stages{Classes: []int{4, 2, 9}, Features: c, Codes: c, Ridge: mat.NewDense(1, 1, []float64{1}), MeanAbsOD: [3]float64{0.5, 0.25, 0}}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Classes                []int
		Features, Codes, Ridge [][]float64
		MeanAbsOD              [3]float64
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Features) != 3 || len(back.Ridge) != 1 || back.MeanAbsOD != st.MeanAbsOD || back.Classes[2] != 9 {
		t.Fatalf("round trip lost data: %s", b)
	}
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			if back.Codes[i][j] != c.At(i, j) {
				t.Errorf("Codes[%d][%d] = %g, want %g", i, j, back.Codes[i][j], c.At(i, j))
			}
		}
	}
}

// A correlation that does not exist (a constant prototype) is null in
// heatmap.json instead of failing the whole write.
func TestStagesJSONNaN(t *testing.T) {
	c := mat.NewDense(2, 2, []float64{1, math.NaN(), math.NaN(), 1})
	st := &Stages{Classes: []int{0, 1}, Features: c, Codes: c, Ridge: c, MeanAbsOD: [3]float64{math.NaN(), 0, 0}}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"Features":[[1,null],[null,1]]`) || !strings.Contains(string(b), `"MeanAbsOD":[null,0,0]`) {
		t.Errorf("%s", b)
	}
}
