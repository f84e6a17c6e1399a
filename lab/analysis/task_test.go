package analysis

import (
	"context"
	"math"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/features"
)

// taskSet is a set of 4 classes (labels 3, 1, 7, 5), 5 samples each, in
// 3 dimensions, with an offset every class shares.
func taskSet() *features.Set {
	s := &features.Set{D: 3}
	for i := 0; i < 20; i++ {
		l := []int{3, 1, 7, 5}[i%4]
		s.Labels = append(s.Labels, l)
		s.X = append(s.X, 10+float32(l), 10+float32(i%3), 10+float32(l*l%5)+float32(i)/20)
	}
	return s
}

// TestFirstClasses: the n smallest labels, the first perClass samples of
// each in the set's order (counted by brute force here).
func TestFirstClasses(t *testing.T) {
	s := taskSet()
	task, err := FirstClasses(s, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(task.Classes) != 2 || task.Classes[0] != 1 || task.Classes[1] != 3 {
		t.Fatalf("classes %v, want [1 3]", task.Classes)
	}
	var want []int // the indices a brute force keeps
	seen := map[int]int{}
	for i, l := range s.Labels {
		if (l == 1 || l == 3) && seen[l] < 3 {
			seen[l]++
			want = append(want, i)
		}
	}
	if len(task.Y) != len(want) {
		t.Fatalf("%d samples, want %d", len(task.Y), len(want))
	}
	for k, i := range want {
		if task.Y[k] != s.Labels[i] || task.X[k*3] != s.X[i*3] || task.X[k*3+2] != s.X[i*3+2] {
			t.Errorf("sample %d is not the set's %d", k, i)
		}
	}
	if all, _ := FirstClasses(s, 4, 0); len(all.Y) != 20 {
		t.Errorf("perClass 0: %d samples, want all 20", len(all.Y))
	}
	for _, bad := range [][2]int{{5, 0}, {0, 0}, {2, -1}} {
		if _, err := FirstClasses(s, bad[0], bad[1]); err == nil {
			t.Errorf("FirstClasses(%d, %d): no error", bad[0], bad[1])
		}
	}
}

// TestHeatmapCenter: the features stage is the Pearson correlation of the
// class means (computed here in float64, the task's mean subtracted when
// centred: Pearson's r does not see a common offset of a prototype's
// coordinates, but it does see the mean over classes, so centring changes
// it); the λ returned is the model's.
func TestHeatmapCenter(t *testing.T) {
	cfg := flycl.Config{M: 40, P: 2, K: 10, Seed: 1, Lambdas: []float64{0.1, 1, 10}}
	for _, center := range []bool{false, true} {
		task, err := FirstClasses(taskSet(), 3, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := len(task.Y)
		mean := make([]float64, 3)
		if center {
			for i := 0; i < n; i++ {
				for j := range mean {
					mean[j] += float64(task.X[i*3+j]) / float64(n)
				}
			}
		}
		protos := make([][]float64, len(task.Classes))
		for ci, c := range task.Classes {
			protos[ci] = make([]float64, 3)
			cnt := 0
			for i, l := range task.Y {
				if l == c {
					cnt++
					for j := range 3 {
						protos[ci][j] += float64(task.X[i*3+j]) - mean[j]
					}
				}
			}
			for j := range 3 {
				protos[ci][j] /= float64(cnt)
			}
		}
		st, lambda, err := Heatmap(context.Background(), cfg, task, center)
		if err != nil {
			t.Fatal(err)
		}
		if !(lambda > 0) {
			t.Errorf("λ %g", lambda)
		}
		for a := range protos {
			for b := range protos {
				want := pearson(protos[a], protos[b])
				// float32 rows summed in float64: 1e-5 of r's range
				if got := st.Features.At(a, b); math.Abs(got-want) > 1e-5 {
					t.Errorf("center=%v: r(%d,%d) = %g, want %g", center, a, b, got, want)
				}
			}
		}
	}
}

func pearson(a, b []float64) float64 {
	var ma, mb float64
	for i := range a {
		ma += a[i] / float64(len(a))
		mb += b[i] / float64(len(b))
	}
	var sab, saa, sbb float64
	for i := range a {
		sab += (a[i] - ma) * (b[i] - mb)
		saa += (a[i] - ma) * (a[i] - ma)
		sbb += (b[i] - mb) * (b[i] - mb)
	}
	return sab / math.Sqrt(saa*sbb)
}
