package watch

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/reject"
)

// A reserved class (the camera's empty scene learned as "background", a
// user's "none of these") is never an answer: a frame whose top class is
// reserved is answered "unknown" with Unknown set, whatever the
// rejection; a frame of a learned class is still answered with it. The
// truth is the colour each class was taught from (meanExtractor: the
// frame's mean colour).
func TestReservedClassNotAnAnswer(t *testing.T) {
	m, err := deploy.New(flycl.Config{M: 64, P: 3, K: 16, Seed: 1}, 3, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	taught := map[string][3]float64{"cat": {0.9, 0.1, 0.1}, "background": {0.1, 0.9, 0.1}, "None": {0.1, 0.1, 0.9}}
	var x []float32
	var y []string
	for name, c := range taught {
		for range 6 {
			for _, v := range c {
				x = append(x, float32(v+0.02*r.NormFloat64()))
			}
			y = append(y, name)
		}
	}
	if _, err := m.Learn(context.Background(), x, y, nil, deploy.LearnOptions{}); err != nil {
		t.Fatal(err)
	}
	c := &ModelClassifier{Extractor: meanExtractor{}, Predictor: m.Model.Snapshot().Predictor(), Rejection: reject.Rule{}}
	for name, col := range taught {
		p, err := c.Classify(context.Background(), solid(8, 8, [3]float64{255 * col[0], 255 * col[1], 255 * col[2]}))
		if err != nil {
			t.Fatal(err)
		}
		if p.Top[0].Name != name {
			t.Fatalf("a %s frame: top class %s", name, p.Top[0].Name)
		}
		reserved := name != "cat"
		if want := map[bool]string{true: UnknownAnswer, false: name}[reserved]; p.Answer != want || p.Unknown != reserved {
			t.Errorf("a %s frame: answer %q, unknown %v; want %q, %v", name, p.Answer, p.Unknown, want, reserved)
		}
	}
}
