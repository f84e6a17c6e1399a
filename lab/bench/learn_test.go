package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/flycl/flycl"
)

// rows returns the whitespace-split lines of out whose first field is
// first.
func rows(out, first string) [][]string {
	var r [][]string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == first {
			r = append(r, f)
		}
	}
	return r
}

// TestServeLearn runs the benchmark at a tiny size: on each of the three
// paths (the last a model in the dual form) every learn publishes the
// next version, and the reopened file holds the last one (the learns
// were saved).
func TestServeLearn(t *testing.T) {
	var out bytes.Buffer
	const learns = 3
	err := ServeLearn(context.Background(), &out, io.Discard, ServeLearnOptions{M: 64, D: 8, N: 6, Classes: 2, Learns: learns,
		Dir: t.TempDir(), Policy: flycl.LambdaKeep, Checkpoint: 2})
	if err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, path := range []string{"refactor+rewrite", "update+journal", "dual+journal"} {
		if !strings.Contains(s, "\n"+path+"\n") {
			t.Errorf("no table for %s:\n%s", path, s)
		}
	}
	for l := 1; l <= learns; l++ {
		r := rows(s, fmt.Sprint(l))
		if len(r) != 3 || r[0][1] != fmt.Sprint(l) || r[1][1] != fmt.Sprint(l) || r[2][1] != fmt.Sprint(l) {
			t.Errorf("learn %d: rows %v, want version %d on every path", l, r, l)
		}
	}
	if r := rows(s, "reopen"); len(r) != 3 || r[0][1] != fmt.Sprint(learns) || r[1][1] != fmt.Sprint(learns) || r[2][1] != fmt.Sprint(learns) {
		t.Errorf("reopen rows %v, want version %d on every path", r, learns)
	}
	if !strings.Contains(s, "p50 of learns 2..3") {
		t.Errorf("no p50 line:\n%s", s)
	}
}

// TestLearnUpdate runs the benchmark at a tiny size with λ kept: the
// refactor path refactors every learn, the update path (limit 8 ≥ n)
// updates the factor
// on every learn after the first (which factors from scratch).
func TestLearnUpdate(t *testing.T) {
	var out bytes.Buffer
	err := LearnUpdate(context.Background(), &out, LearnUpdateOptions{M: 64, D: 8, N: 4, Classes: 2, Learns: 3, Limit: 8, Policy: flycl.LambdaKeep}) // (at m=64 the default crossover is below n)
	if err != nil {
		t.Fatal(err)
	}
	s := out.String()
	ref, upd := rows(s, "refactor"), rows(s, "update")
	if len(ref) != 3 || len(upd) != 3 {
		t.Fatalf("%d refactor and %d update rows, want 3 each:\n%s", len(ref), len(upd), s)
	}
	for i := range 3 {
		want := "update"
		if i == 0 {
			want = "refactor"
		}
		if ref[i][3] != "refactor" || upd[i][3] != want {
			t.Errorf("learn %d: refactor path %s, update path %s (want refactor, %s)", i+1, ref[i][3], upd[i][3], want)
		}
	}
}

// TestLearnOptionsRefused: sizes below 1 and more classes than samples
// are refused before any work.
func TestLearnOptionsRefused(t *testing.T) {
	ok := ServeLearnOptions{M: 64, D: 8, N: 4, Classes: 2, Learns: 1}
	for _, c := range []struct {
		name string
		edit func(*ServeLearnOptions)
	}{
		{"m 0", func(o *ServeLearnOptions) { o.M = 0 }},
		{"d -1", func(o *ServeLearnOptions) { o.D = -1 }},
		{"learns 0", func(o *ServeLearnOptions) { o.Learns = 0 }},
		{"more classes than samples", func(o *ServeLearnOptions) { o.Classes = 5 }},
	} {
		o := ok
		c.edit(&o)
		var out bytes.Buffer
		if err := ServeLearn(context.Background(), &out, io.Discard, o); err == nil || out.Len() != 0 {
			t.Errorf("ServeLearn %s: %v, printed %q", c.name, err, out.String())
		}
		if err := LearnUpdate(context.Background(), &out, LearnUpdateOptions{M: o.M, D: o.D, N: o.N, Classes: o.Classes, Learns: o.Learns}); err == nil || out.Len() != 0 {
			t.Errorf("LearnUpdate %s: %v, printed %q", c.name, err, out.String())
		}
	}
}

// TestDualBench runs the crossover benchmark at a tiny size: one dual row
// per n, a primal row at the n of PrimalN, and the memory each form holds
// as its formula gives (primal 4·m² bytes).
func TestDualBench(t *testing.T) {
	var out bytes.Buffer
	err := Dual(context.Background(), &out, DualOptions{Ms: []int{64}, Ns: []int{10, 20}, PrimalN: []int{10}, D: 8, Add: 4, Classes: 2})
	if err != nil {
		t.Fatal(err)
	}
	r := rows(out.String(), "64")
	if len(r) != 3 || r[0][2] != "dual" || r[1][2] != "primal" || r[2][2] != "dual" || r[1][1] != "10" {
		t.Fatalf("rows %v, want dual and primal at n = 10, dual at 20:\n%s", r, out.String())
	}
	if want := fmt.Sprintf("%.1f", 4*64*64/float64(1<<20)); r[1][5] != want {
		t.Errorf("primal holds %s MiB, want %s", r[1][5], want)
	}
}
