package main

// adapter_test.go holds the tests' uses of the root package, as
// adapter.go holds the package's.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/reject"
)

// checkAnswers compares the C answers ("class:unknown:prob:margin") with
// flycl predict's: the top class of the Go Predictor's ranking, the
// model's calibrated rejection, its probability and margin.
func checkAnswers(t *testing.T, got []string, m *deploy.Model, xt []float32) {
	t.Helper()
	p := m.Model.Predictor()
	rej, err := reject.ParseRule("auto", p.Rejection())
	if err != nil {
		t.Fatal(err)
	}
	if !rej.Enabled() || !(rej.Temperature > 0) {
		t.Fatalf("the model's rejection is off or uncalibrated (%+v): the test checks nothing", rej)
	}
	s, cos, err := p.ScoresCosines(context.Background(), xt)
	if err != nil {
		t.Fatal(err)
	}
	top := p.Rank(s, 1)
	if len(got) != len(top) {
		t.Fatalf("answers: C %d, Go %d", len(got), len(top))
	}
	nc := p.Classes().Len()
	index := map[int]int{}
	for i, l := range p.Classes().Labels() {
		index[l] = i
	}
	for i := range top {
		row := s[i*nc : (i+1)*nc]
		unknown := 0
		if rej.Reject(row, cos[i]) {
			unknown = 1
		}
		pr, _ := rej.Probability(row)
		mg, _ := rej.Margin(row, cos[i])
		f := strings.Split(got[i], ":")
		if len(f) != 4 {
			t.Fatalf("answer %d: %q", i, got[i])
		}
		gp, err1 := strconv.ParseFloat(f[2], 64)
		gm, err2 := strconv.ParseFloat(f[3], 64)
		if f[0] != strconv.Itoa(index[top[i][0].Label]) || f[1] != strconv.Itoa(unknown) || err1 != nil || err2 != nil ||
			math.Float64bits(gp) != math.Float64bits(pr) || math.Float64bits(gm) != math.Float64bits(mg) {
			t.Errorf("answer %d: C %s, Go %d:%d:%x:%x", i, got[i], index[top[i][0].Label], unknown, pr, mg)
		}
	}
}

// TestStatusOf: the root package's typed errors map one to one to their
// codes, wrapped or not, and the others as flycl.h says.
func TestStatusOf(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("context: %w", err) }
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, FLYCL_OK},
		{flycl.ErrBadInput, FLYCL_E_BAD_INPUT},
		{wrap(flycl.ErrBadInput), FLYCL_E_BAD_INPUT},
		{flycl.Input(errors.New("a refused file")), FLYCL_E_BAD_INPUT},
		{wrap(flycl.ErrNotTrained), FLYCL_E_NOT_TRAINED},
		{wrap(flycl.ErrUnknownClass), FLYCL_E_UNKNOWN_CLASS},
		{wrap(flycl.ErrTooLarge), FLYCL_E_TOO_LARGE},
		{wrap(&flycl.NameError{Name: " a", Rule: "starts with white space"}), FLYCL_E_CLASS_NAME},
		{wrap(store.ErrNoUndo), FLYCL_E_NO_UNDO},
		{errorf(FLYCL_E_CONFIG, "bad"), FLYCL_E_CONFIG},
		{errors.New("a factorization failed"), FLYCL_E_FAILED},
	} {
		if got := statusOf(c.err); got != c.want {
			t.Errorf("statusOf(%v) = %d (%s), want %d (%s)", c.err, got, statusName(got), c.want, statusName(c.want))
		}
	}
}

func mustConfig(tb testing.TB, js string) flycl.Config {
	cfg, err := parseConfig(js)
	if err != nil {
		tb.Fatal(err)
	}
	return cfg
}
