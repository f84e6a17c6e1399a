package flycl

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// TestUnlearnEqualsNeverSeen: a model taught tasks {0,1}, {2}, {3,4},
// then {1,5} (more samples of a known class and a new class), that
// unlearns the last task with the λ it had before, equals the model
// taught only the first three: the same classes and counts, λ and
// predictions; G and C equal up to the float32 rounding that
// checkForgotten bounds. Undoing the third task as well (a new class
// and an old one's samples) gives the model of the first two. Wrong
// input is refused and changes nothing.
func TestUnlearnEqualsNeverSeen(t *testing.T) {
	ctx := context.Background()
	const d = 16
	cfg := Config{M: 200, P: 6, K: 60, Seed: 9, Lambdas: []float64{0.1, 1, 10, 100}}
	type task struct {
		x []float32
		y []int
	}
	var tasks []task
	for i, cls := range [][]int{{0, 1}, {2}, {3, 4}, {1, 5}} {
		x, y := clusters(uint64(60+i), 40*len(cls), d, cls, 0.9)
		tasks = append(tasks, task{x, y})
	}
	full, _ := New(cfg, d)
	var lambdas []float64 // λ after each task
	for _, tk := range tasks {
		if _, err := full.Learn(ctx, tk.x, tk.y, nil); err != nil {
			t.Fatal(err)
		}
		lambdas = append(lambdas, full.Lambda())
	}
	var h [][]float32
	N := 0
	for _, tk := range tasks {
		c, err := full.expandCodes(ctx, tk.x)
		if err != nil {
			t.Fatal(err)
		}
		h = append(h, c)
		N += len(tk.y)
	}

	// refused: labels the model lacks, more samples than a class has,
	// samples that are not what a removed class learned
	before := full.state()
	last := tasks[3]
	if _, err := full.Unlearn(ctx, last.x, slices.Repeat([]int{9}, len(last.y)), lambdas[2]); !errors.Is(err, ErrUnknownClass) {
		t.Fatalf("unknown class: %v", err)
	}
	if _, err := full.Unlearn(ctx, tasks[1].x, slices.Repeat([]int{5}, len(tasks[1].y)), lambdas[2]); !errors.Is(err, ErrBadInput) {
		t.Fatalf("other samples as class 5: %v", err)
	}
	if st := full.state(); !sameFloats(st.Coef, before.Coef) || st.Version != before.Version || !slices.Equal(st.Counts, before.Counts) {
		t.Fatal("a refused unlearn changed the model")
	}

	for undo := 1; undo <= 2; undo++ {
		tk := tasks[len(tasks)-undo]
		rec, err := full.Unlearn(ctx, tk.x, tk.y, lambdas[len(tasks)-undo-1])
		if err != nil {
			t.Fatal(err)
		}
		never, _ := New(cfg, d)
		for _, k := range tasks[:len(tasks)-undo] {
			if _, err := never.Learn(ctx, k.x, k.y, nil); err != nil {
				t.Fatal(err)
			}
		}
		a, b := full.state(), never.state()
		if !slices.Equal(a.Labels, b.Labels) || a.Lambda != b.Lambda || !slices.Equal(a.Counts, b.Counts) || full.Samples() != never.Samples() {
			t.Fatalf("undo %d: %v λ=%g counts %v n=%d; never seen %v λ=%g counts %v n=%d", undo,
				a.Labels, a.Lambda, a.Counts, full.Samples(), b.Labels, b.Lambda, b.Counts, never.Samples())
		}
		if want := uint64(len(tasks) + undo); full.Version() != want || rec.Samples != len(tk.y) {
			t.Fatalf("undo %d: version %d (want %d, versions only grow), record %+v", undo, full.Version(), want, rec)
		}
		checkForgotten(t, full, never, h, N, undo)
		tx, _ := clusters(95, 200, d, []int{0, 1, 2, 3, 4}, 1.2)
		pa, err := full.Predictor().Predict(ctx, tx)
		if err != nil {
			t.Fatal(err)
		}
		pb, _ := never.Predictor().Predict(ctx, tx)
		if !slices.Equal(pa, pb) {
			t.Fatalf("undo %d: predictions differ from the model that never saw the task", undo)
		}
	}
}
