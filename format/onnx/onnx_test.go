//go:build cgo

// ONNX Runtime is a C library: this test needs cgo.

package onnx_test

import (
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/flycl/flycl/format/onnx"
	"github.com/flycl/flycl/vision/backbone"
)

// A small graph with a dynamic batch, an attribute of each kind used by the
// builders, and a named output, run by ONNX Runtime: y = Softmax(Relu(x·2 + c)).
func TestGraphRunsOnORT(t *testing.T) {
	if err := backbone.Init(testLibrary()); err != nil {
		t.Skipf("%v", err)
	}
	g := onnx.NewGraph("t")
	x := g.Input("x", -1, 3)
	y := g.Node("Mul", []string{x, g.Scalar(2)})
	y = g.Node("Add", []string{y, g.Const("c", []int64{3}, []float32{-1, 0, 1})})
	y = g.Node("Relu", []string{y})
	y = g.Node("Softmax", []string{y}, onnx.AInt("axis", -1))
	out := g.Named("probs", y)
	g.Output(out, -1, 3)
	s, err := ort.NewDynamicAdvancedSessionWithONNXData(g.Model(17), []string{"x"}, []string{"probs"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	in, _ := ort.NewTensor(ort.NewShape(2, 3), []float32{0, 0, 0, 1, -5, 0.5})
	res := make([]float32, 6)
	o, _ := ort.NewTensor(ort.NewShape(2, 3), res)
	if err := s.Run([]ort.Value{in}, []ort.Value{o}); err != nil {
		t.Fatal(err)
	}
	// row 0: relu(-1, 0, 1) = (0, 0, 1): softmax = (1, 1, e)/(2+e)
	want := []float32{0.21194156, 0.21194156, 0.57611688, 0, 0, 0}
	// row 1: relu(1, -10, 2) = (1, 0, 2): softmax = (e, 1, e²)/(1+e+e²)
	want[3], want[4], want[5] = 0.24472848, 0.09003057, 0.66524094
	for i := range want {
		if d := res[i] - want[i]; d > 1e-6 || d < -1e-6 {
			t.Fatalf("probs %v, want %v", res, want)
		}
	}
}
