package answer

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/reject"
)

// TestPredict: every answer is the predictor's own ranking, "unknown"
// exactly where the rejection rejects (threshold off: never; above every
// score: always), with the rejection's probability and margin.
func TestPredict(t *testing.T) {
	ctx := context.Background()
	const d = 4
	m, err := deploy.New(flycl.Config{M: 40, P: 2, K: 10, Seed: 3, Lambdas: []float64{0.1, 1}}, d, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p0 := m.Model.Snapshot().Predictor()
	if _, err := Predict(ctx, p0, reject.Rule{}, make([]float32, d), 2); !errors.Is(err, flycl.ErrNotTrained) {
		t.Errorf("no classes: %v, want ErrNotTrained", err)
	}
	x := []float32{1, 0, 0, 0.1, 0.9, 0.1, 0, 0, 0, 1, 0, 0.2, 0, 0.8, 0.1, 0, 0, 0, 1, 0, 0.1, 0, 0.9, 0}
	names := []string{"a", "a", "b", "b", "c", "c"}
	if _, err := m.Learn(ctx, x, names, nil, deploy.LearnOptions{}); err != nil {
		t.Fatal(err)
	}
	p := m.Model.Snapshot().Predictor()
	want, err := p.Top(ctx, x, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		unknown string
		all     *bool // nil: whatever the rejection says
	}{{"off", ptr(false)}, {"1e9", ptr(true)}, {"auto", nil}} {
		t.Run(tc.unknown, func(t *testing.T) {
			rej, err := reject.ParseRule(tc.unknown, p.Rejection())
			if err != nil {
				t.Fatal(err)
			}
			preds, err := Predict(ctx, p, rej, x, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(preds) != len(names) {
				t.Fatalf("%d predictions of %d inputs", len(preds), len(names))
			}
			scores, cos, err := p.ScoresCosines(ctx, x)
			if err != nil {
				t.Fatal(err)
			}
			nc := p.Classes().Len()
			for i, pr := range preds {
				row := scores[i*nc : (i+1)*nc]
				if !reflect.DeepEqual(pr.Top, want[i]) {
					t.Errorf("input %d: top %v, the predictor's %v", i, pr.Top, want[i])
				}
				unknown := rej.Reject(row, cos[i])
				if tc.all != nil && unknown != *tc.all {
					t.Fatalf("input %d: the rejection says %v under %s", i, unknown, tc.unknown)
				}
				wantAnswer := want[i][0].Name
				if unknown {
					wantAnswer = UnknownAnswer
				}
				if pr.Unknown != unknown || pr.Answer != wantAnswer {
					t.Errorf("input %d: answer %q unknown %v, want %q %v", i, pr.Answer, pr.Unknown, wantAnswer, unknown)
				}
				if v, ok := rej.Margin(row, cos[i]); ok != (pr.Margin != nil) || ok && *pr.Margin != v {
					t.Errorf("input %d: margin %v, want %g (%v)", i, pr.Margin, v, ok)
				}
				if v, ok := rej.Probability(row); ok != (pr.Probability != nil) || ok && *pr.Probability != v {
					t.Errorf("input %d: probability %v, want %g (%v)", i, pr.Probability, v, ok)
				}
			}
		})
	}
}

func ptr(b bool) *bool { return &b }

// TestAccuracy: hand-counted scores; a missing truth gives none.
func TestAccuracy(t *testing.T) {
	pred := func(top string, unknown bool) Prediction {
		return Prediction{Top: []flycl.Ranked{{Name: top}}, Answer: top, Unknown: unknown}
	}
	preds := []Prediction{pred("a", false), pred("b", true), pred("a", false), pred("b", true), pred("a", false)}
	for _, tc := range []struct {
		name  string
		truth []string
		want  *Score
	}{
		{"all known", []string{"a", "b", "b", "b", "a"},
			&Score{Correct: 4, Evaluated: 5, Accuracy: 0.8, Rejected: 2}},
		{"one unlearned class", []string{"a", "z", "b", "z", "z"},
			&Score{Correct: 1, Evaluated: 2, Accuracy: 0.5, Unknown: 3, UnknownRejected: 2}},
		{"a truth missing", []string{"a", "", "b", "b", "a"}, nil},
		{"no truth", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Accuracy(preds, tc.truth, []string{"a", "b"})
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
