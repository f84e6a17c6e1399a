package deploy

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/intake"
)

// TestNamesRefusesDuplicateClassNames: a feature file whose class_names
// name two labels alike (['dup', 'dup'], or é in two Unicode forms) would
// merge two labels into one class: Names refuses it with the
// *flycl.NameError flycl stats refuses it with; names come back in NFC.
func TestNamesRefusesDuplicateClassNames(t *testing.T) {
	labels := []int{0, 1, 1, 0}
	for _, tc := range []struct {
		classNames []string
		want       []string
		rule       string
	}{
		{[]string{"cat", "dog"}, []string{"cat", "dog", "dog", "cat"}, ""},
		{nil, []string{"0", "1", "1", "0"}, ""},
		{[]string{"cafe\u0301", "tea"}, []string{"caf\u00e9", "tea", "tea", "caf\u00e9"}, ""},
		{[]string{"dup", "dup"}, nil, "two labels (0 and 1)"},
		{[]string{"caf\u00e9", "cafe\u0301"}, nil, "same name in Unicode NFC"},
		{[]string{"a", "a\u200b"}, nil, "U+200B"},
		{[]string{"a", "b "}, nil, "ends with white space"},
	} {
		got, err := intake.Names(labels, tc.classNames)
		if tc.rule == "" {
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("%q: %q, %v", tc.classNames, got, err)
			}
			continue
		}
		var ne *flycl.NameError
		if !errors.As(err, &ne) || !strings.Contains(err.Error(), tc.rule) {
			t.Errorf("%q: error %v, want a *flycl.NameError about %q", tc.classNames, err, tc.rule)
		}
	}
}

// TestLearnNormalisesNames: the samples of a learn named in two Unicode
// forms are one class, reported and stored in NFC; a name breaking a rule
// is refused before the model changes.
func TestLearnNormalisesNames(t *testing.T) {
	const d = 4
	m, err := New(flycl.Config{M: 40, P: 2, K: 10, Lambdas: []float64{1}}, d, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := blob(1, 4, d)
	res, err := m.Learn(context.Background(), x, []string{"cafe\u0301", "caf\u00e9", "tea", "tea"}, nil, LearnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Added, []string{"caf\u00e9", "tea"}) || !slices.Equal(m.Model.Classes().Names(), []string{"caf\u00e9", "tea"}) {
		t.Fatalf("added %q, stored %q: want the NFC form once", res.Added, m.Model.Classes().Names())
	}
	res, err = m.Learn(context.Background(), x, []string{"cafe\u0301", "tea", "milk", "milk"}, nil, LearnOptions{})
	if err != nil || !slices.Equal(res.Known, []string{"caf\u00e9", "tea"}) || !slices.Equal(res.Added, []string{"milk"}) {
		t.Fatalf("second learn: known %q, added %q, %v", res.Known, res.Added, err)
	}
	v := m.Model.Version()
	for _, bad := range []string{"milk ", "\u202emilk", "m\u200bilk", ""} {
		_, err := m.Learn(context.Background(), x, []string{"tea", bad, "tea", "tea"}, nil, LearnOptions{})
		var ne *flycl.NameError
		if !errors.As(err, &ne) || ne.Name != bad {
			t.Errorf("%q: error %v, want a *flycl.NameError", bad, err)
		}
		if m.Model.Version() != v || m.Model.Classes().Len() != 3 {
			t.Fatalf("%q: a refused learn changed the model", bad)
		}
	}
}

func blob(seed uint64, n, d int) []float32 {
	r := rand.New(rand.NewPCG(seed, 9))
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// TestLearnReportsRaisedLambda: a λ too small for G + λI to factor is
// raised by the solve, and the result says so (requested and used λ, a
// warning). 1e-300 underflows to 0 in float32 and G has rank at most
// n = 6 < m = 60, so G + λI is singular as float32 and must be raised;
// λ = 10 is not. Online, every mini-batch's raise is counted.
func TestLearnReportsRaisedLambda(t *testing.T) {
	const d, n = 5, 6
	x := blob(2, n, d)
	names := []string{"a", "b", "a", "b", "a", "b"}
	for _, tc := range []struct {
		opt  LearnOptions
		grid []float64
		want string // substring of the one warning; "" for none
	}{
		{LearnOptions{Lambda: 1e-300}, []float64{1, 10}, "λ 1e-300 was requested, "},
		{LearnOptions{Lambda: 10}, []float64{1, 10}, ""},
		{LearnOptions{Lambda: 1e-300, Online: true, Batch: 2}, []float64{1, 10}, "was used in 3 of 3 mini-batches"},
	} {
		m, err := New(flycl.Config{M: 60, P: 2, K: 20, Lambdas: tc.grid}, d, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.Learn(context.Background(), x, names, nil, tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		if res.LambdaRequested != tc.opt.Lambda || res.Lambda != m.Model.Lambda() {
			t.Errorf("%+v: requested %g, used %g (model %g)", tc.opt, res.LambdaRequested, res.Lambda, m.Model.Lambda())
		}
		if tc.want == "" {
			if res.Warnings != nil || res.Lambda != tc.opt.Lambda {
				t.Errorf("%+v: λ %g, warnings %q", tc.opt, res.Lambda, res.Warnings)
			}
			continue
		}
		if !(res.Lambda > 1e-30) {
			t.Errorf("%+v: λ %g used: not raised", tc.opt, res.Lambda)
		}
		if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], tc.want) {
			t.Errorf("%+v: warnings %q, want one about %q", tc.opt, res.Warnings, tc.want)
		}
	}
}

// TestLambdaWarnings: the sentence for a raise of GCV's choice, and for
// raises in some mini-batches only, names the λ chosen and the λ used.
func TestLambdaWarnings(t *testing.T) {
	raised := flycl.TaskRecord{Lambda: 100, RaisedFrom: 1e-3}
	plain := flycl.TaskRecord{Lambda: 1}
	for _, tc := range []struct {
		steps     []flycl.TaskRecord
		requested float64
		want      string
	}{
		{[]flycl.TaskRecord{plain}, 0, ""},
		{[]flycl.TaskRecord{plain, plain}, 1, ""},
		{[]flycl.TaskRecord{raised}, 0, "λ 0.001 chosen by GCV was raised to 100: "},
		{[]flycl.TaskRecord{plain, raised, {Lambda: 1000, RaisedFrom: 1e-3}}, 0, "raised (to 100 to 1000) in 2 of 3 mini-batches"},
		{[]flycl.TaskRecord{raised, plain}, 1e-3, "λ 0.001 was requested, 100 was used in 1 of 2 mini-batches"},
	} {
		got := LambdaWarnings(tc.steps, tc.requested)
		if tc.want == "" {
			if got != nil {
				t.Errorf("%+v: %q, want none", tc.steps, got)
			}
			continue
		}
		if len(got) != 1 || !strings.Contains(got[0], tc.want) || !strings.Contains(got[0], "cannot be factored") {
			t.Errorf("%+v: %q, want one about %q", tc.steps, got, tc.want)
		}
	}
}
