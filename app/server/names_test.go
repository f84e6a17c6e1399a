package server

import (
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestLearnReportsLambda: a learn whose fixed λ had to be raised says so
// in its response (lambda_requested, lambda, a warning); one whose λ was
// used as asked has an empty warnings list. 1e-300 is 0 in float32 and
// 6 samples give G rank at most 6 < m = 300, so G + λI must be raised to
// factor; λ = 0.5 factors (the core's TestLearnOptions fixes it too).
func TestLearnReportsLambda(t *testing.T) {
	r := rand.New(rand.NewPCG(60, 61))
	x, y := clusters(r, []int{0, 1}, 6)
	names := make([]string, len(y))
	for i, c := range y {
		names[i] = className(c)
	}
	for _, tc := range []struct {
		lambda float64
		online bool
		warn   string
	}{
		{1e-300, false, "λ 1e-300 was requested, "},
		{1e-300, true, "λ 1e-300 was requested, "},
		{0.5, false, ""},
	} {
		_, hs, _ := testServer(t, nil)
		req := Request{Features: x, Labels: names, Lambda: tc.lambda, Online: tc.online}
		if tc.online {
			req.Batch = 2
		}
		var lr LearnResponse
		code, _, b := do(t, "POST", hs.URL+"/v1/learn", "application/json", jsonBody(t, req), "", &lr)
		if code != http.StatusOK {
			t.Fatalf("λ=%g: %d %s", tc.lambda, code, b)
		}
		if lr.LambdaRequested != tc.lambda || !strings.Contains(string(b), `"lambda_requested":`) {
			t.Errorf("λ=%g: lambda_requested %g in %s", tc.lambda, lr.LambdaRequested, b)
		}
		if tc.warn == "" {
			if lr.Lambda != tc.lambda || lr.Warnings == nil || len(lr.Warnings) != 0 {
				t.Errorf("λ=%g: used %g, warnings %q (want an empty list)", tc.lambda, lr.Lambda, lr.Warnings)
			}
			continue
		}
		if !(lr.Lambda > 1e-30) || len(lr.Warnings) != 1 || !strings.Contains(lr.Warnings[0], tc.warn) {
			t.Errorf("λ=%g online=%v: used %g, warnings %q, want one about %q", tc.lambda, tc.online, lr.Lambda, lr.Warnings, tc.warn)
		}
	}
}

// TestLearnNormalisesLabels: labels are learned in Unicode NFC, so a
// class named with a decomposed accent and one with the composed accent
// are one class, listed once in NFC.
func TestLearnNormalisesLabels(t *testing.T) {
	_, hs, _ := testServer(t, nil)
	r := rand.New(rand.NewPCG(62, 63))
	x, _ := clusters(r, []int{0}, 4)
	var lr LearnResponse
	for i, label := range []string{"cafe\u0301", "caf\u00e9"} {
		code, _, b := do(t, "POST", hs.URL+"/v1/learn", "application/json", jsonBody(t, Request{Features: x, Label: label}), "", &lr)
		if code != http.StatusOK {
			t.Fatalf("learn %q: %d %s", label, code, b)
		}
		if want := []string{"caf\u00e9"}; i == 0 && !slices.Equal(lr.NewClasses, want) {
			t.Fatalf("new classes %q, want %q", lr.NewClasses, want)
		}
	}
	if lr.Classes != 1 || len(lr.NewClasses) != 0 {
		t.Fatalf("the two forms of café gave %d classes (new %q)", lr.Classes, lr.NewClasses)
	}
}
