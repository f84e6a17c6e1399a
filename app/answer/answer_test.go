package answer

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/reject"
)

// TestPredictInputs: each answer is the predictor's own ranking
// (flycl.Predictor.Top) under the input's name (its index without names)
// with its truth; the accuracy is counted here by brute force over the
// answers; features of another dimension are an input error naming the
// source.
func TestPredictInputs(t *testing.T) {
	ctx := context.Background()
	const d = 4
	m, err := deploy.New(flycl.Config{M: 40, P: 2, K: 10, Seed: 3, Lambdas: []float64{0.1, 1}}, d, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := []float32{1, 0, 0, 0.1, 0.9, 0.1, 0, 0, 0, 1, 0, 0.2, 0, 0.8, 0.1, 0, 0, 0, 1, 0, 0.1, 0, 0.9, 0}
	if _, err := m.Learn(ctx, x, []string{"a", "a", "b", "b", "c", "c"}, nil, deploy.LearnOptions{}); err != nil {
		t.Fatal(err)
	}
	p := m.Model.Snapshot().Predictor()
	want, err := p.Top(ctx, x, 2)
	if err != nil {
		t.Fatal(err)
	}
	off, _ := reject.ParseRule("off", p.Rejection())
	files := []string{"f0", "f1", "f2", "f3", "f4", "f5"}
	for _, tc := range []struct {
		name         string
		names, truth []string
	}{
		{"unnamed, no truth", nil, nil},
		{"named, learned classes", files, []string{"a", "a", "b", "b", "c", "c"}},
		{"named, wrong and unlearned", files, []string{"b", "a", "z", "b", "z", "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PredictInputs(ctx, p, off, Inputs{X: x, D: d, Names: tc.names, Truth: tc.truth, Source: "s"}, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Answers) != 6 {
				t.Fatalf("%d answers of 6 inputs", len(got.Answers))
			}
			var correct, evaluated, unknown int
			for i, a := range got.Answers {
				input, truth := strconv.Itoa(i), ""
				if tc.names != nil {
					input = tc.names[i]
				}
				if tc.truth != nil {
					truth = tc.truth[i]
				}
				if a.Input != input || a.Truth != truth || !reflect.DeepEqual(a.Top, want[i]) || a.Answer != want[i][0].Name || a.Unknown {
					t.Errorf("answer %d: %+v, want input %q truth %q top %v", i, a, input, truth, want[i])
				}
				switch {
				case truth == "z":
					unknown++
				case truth != "":
					evaluated++
					if want[i][0].Name == truth {
						correct++
					}
				}
			}
			if tc.truth == nil {
				if got.Accuracy != nil {
					t.Errorf("accuracy %+v without truth", got.Accuracy)
				}
				return
			}
			if a := got.Accuracy; a == nil || a.Correct != correct || a.Evaluated != evaluated || a.Unknown != unknown {
				t.Errorf("accuracy %+v, want %d/%d correct, %d of unlearned classes", a, correct, evaluated, unknown)
			}
		})
	}
	_, err = PredictInputs(ctx, p, off, Inputs{X: x[:20], D: 5, Source: "five.npz"}, 2)
	if !flycl.IsInput(err) || !strings.HasPrefix(err.Error(), "five.npz: the inputs have 5-dimensional features, the model d=4") {
		t.Errorf("d=5: %v", err)
	}
}
