package statcmp

import (
	"context"
	"testing"

	"github.com/flycl/flycl"
)

// Close accepts a model against its own clone and against the same rows
// learned and one of them taken back out (Unlearn: one add and one
// subtract of that row), and refuses one with a row more, or whose
// statistics hold another row.
func TestClose(t *testing.T) {
	ctx := context.Background()
	cfg := flycl.Config{M: 32, P: 2, K: 8, Lambdas: []float64{1}}
	x := []float32{1, 2, 3, 4, 4, 3, 2, 1, 0, 1, 0, 1, 1, 0, 1, 0}
	y := []int{0, 1, 0, 1}
	learn := func(n int) *flycl.Model {
		m, err := flycl.New(cfg, 4)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Learn(ctx, x[:4*n], y[:n], nil); err != nil {
			t.Fatal(err)
		}
		return m
	}
	three, four := learn(3), learn(4)
	if err := Close(three, three.Clone(), four, 0); err != nil {
		t.Errorf("a model against its clone: %v", err)
	}
	undone := learn(4)
	if _, err := undone.Unlearn(ctx, x[12:16], y[3:4], 1); err != nil {
		t.Fatal(err)
	}
	if err := Close(undone, three, four, 2*4*0x1p-24); err != nil {
		t.Errorf("a row learned and taken back out, against never learned: %v", err)
	}
	if err := Close(four, three, four, 2*4*0x1p-24); err == nil {
		t.Error("a model with a row more passed")
	}
	// the same classes and counts, one row twice as long: G and S move
	// by far more than rounding
	x[0], x[1], x[2], x[3] = 2, 4, 6, 8
	if err := Close(learn(3), three, four, 2*4*0x1p-24); err == nil {
		t.Error("a model of another row passed")
	}
}
