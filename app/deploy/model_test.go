package deploy

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/flycl/flycl"
)

// TestLearnRefusesBadLambda: a λ that is NaN, infinite or negative is
// refused (NaN used to pass the `< 0` check and fall back to GCV
// silently), and the model is unchanged.
func TestLearnRefusesBadLambda(t *testing.T) {
	const d = 4
	m, err := New(flycl.Config{M: 20, P: 2, K: 10, Lambdas: []float64{1}}, d, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := []float32{1, 0, 0, 0, 0, 1, 0, 0}
	for _, l := range []float64{math.NaN(), math.Inf(1), -1} {
		_, err := m.Learn(context.Background(), x, []string{"a", "b"}, nil, LearnOptions{Lambda: l})
		if err == nil || !strings.Contains(err.Error(), "lambda") {
			t.Fatalf("λ=%g: %v", l, err)
		}
		if m.Model.Version() != 0 || m.Model.Classes().Len() != 0 {
			t.Fatalf("λ=%g: a refused learn changed the model", l)
		}
	}
	if _, err := m.Learn(context.Background(), x, []string{"a", "b"}, nil, LearnOptions{Lambda: 2}); err != nil || m.Model.Lambda() != 2 {
		t.Fatalf("λ=2: %v (λ %g)", err, m.Model.Lambda())
	}
}
