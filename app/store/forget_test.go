package store

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
)

// TestForget: the one rule of a forget. Exact with the class's data, or
// without it when the journal holds every sample the class learned; only
// the column otherwise. An exact forget leaves the model that never
// learned the class: its scores are compared with a model learned on the
// other samples alone (tolerance: float32 rounding of G's sums of a few
// O(10) products, re-solved; 1e-3 relative to the largest score).
func TestForget(t *testing.T) {
	ctx := context.Background()
	// the samples learn(ctx, class, v) teaches, by class
	rows := func(v float32) (a, a2 []float32) {
		return []float32{1 + v, 2, 3 - v}, []float32{3, 2 + v, 1}
	}
	for _, tc := range []struct {
		name string
		// journalFrom: the learns (of 2) recorded in a journal: 0 both,
		// 1 the second only, 2 none
		journalFrom int
		data        bool
		wantExact   bool
		wantSource  string
	}{
		{"journal holds every sample", 0, false, true, FromJournal},
		{"journal holds part", 1, false, false, ""},
		{"no journal", 2, false, false, ""},
		{"data", 2, true, true, "photos"},
		{"data wins over the journal", 0, true, true, "photos"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.flycl")
			for i, v := range []float32{0, 0.5} {
				st := create(t, path, i >= tc.journalFrom)
				if err := st.Update(ctx, learn(ctx, "a", v)); err != nil {
					t.Fatal(err)
				}
				st.Close()
			}
			st := create(t, path, tc.journalFrom < 2)
			defer st.Close()
			var data func(*deploy.Model) (*ForgetData, error)
			a0, b0 := rows(0)
			a1, b1 := rows(0.5)
			if tc.data {
				data = given(&ForgetData{X: concat(a0, b0, a1, b1), D: 3, Names: []string{"a", "a2", "a", "a2"}, Source: "photos"})
			}
			before := st.model.Model.Version()
			res, err := st.Forget(ctx, "a", data)
			if err != nil {
				t.Fatal(err)
			}
			if res.Exact != tc.wantExact || res.Source != tc.wantSource {
				t.Fatalf("exact %v from %q, want %v from %q", res.Exact, res.Source, tc.wantExact, tc.wantSource)
			}
			if !res.Exact && res.Held != 2 {
				t.Errorf("held %d, want 2", res.Held)
			}
			if res.Exact && res.Record.Samples != 2 {
				t.Errorf("record of %d samples, want 2", res.Record.Samples)
			}
			m := st.model
			if m.Model.Version() != before+1 {
				t.Errorf("version %d after %d", m.Model.Version(), before)
			}
			if _, ok := m.Model.Classes().LabelOf("a"); ok {
				t.Error("class a still there")
			}
			// reopened, the file holds the forget
			st.Close()
			st2 := create(t, path, false)
			defer st2.Close()
			if _, ok := st2.model.Model.Classes().LabelOf("a"); ok {
				t.Error("class a back after reopening")
			}
			// the truth: a model that learned only a2's samples
			fresh, err := deploy.New(cfg, 3, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range [][]float32{b0, b1} {
				if _, err := fresh.Learn(ctx, b, []string{"a2"}, nil, deploy.LearnOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			probe := concat(a0, b0, a1, b1)
			got, err := st2.model.Model.Predictor().Scores(ctx, probe)
			if err != nil {
				t.Fatal(err)
			}
			want, err := fresh.Model.Predictor().Scores(ctx, probe)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d scores, want %d", len(got), len(want))
			}
			diff, scale := 0.0, 0.0
			for i := range got {
				diff = math.Max(diff, math.Abs(float64(got[i]-want[i])))
				scale = math.Max(scale, math.Abs(float64(want[i])))
			}
			if same := diff <= 1e-3*scale; same != tc.wantExact {
				t.Errorf("scores differ by %g (largest %g) from a model that never learned a: same=%v, want %v", diff, scale, same, tc.wantExact)
			}
		})
	}
}

// TestForgetRefused: an unknown class, data of another dimension or
// without the class change nothing.
func TestForgetRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.flycl")
	st := create(t, path, true)
	defer st.Close()
	if err := st.Update(ctx, learn(ctx, "a", 0)); err != nil {
		t.Fatal(err)
	}
	v := st.model.Model.Version()
	for _, tc := range []struct {
		name  string
		class string
		data  *ForgetData
		is    error
	}{
		{"unknown class", "b", nil, flycl.ErrUnknownClass},
		{"unknown class, data not read", "b", &ForgetData{X: make([]float32, 3), D: 3, Names: []string{"b"}}, flycl.ErrUnknownClass},
		{"another dimension", "a", &ForgetData{X: make([]float32, 4), D: 4, Names: []string{"a"}}, nil},
		{"no sample of the class", "a", &ForgetData{X: make([]float32, 3), D: 3, Names: []string{"a2"}, Source: "x"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := false
			var data func(*deploy.Model) (*ForgetData, error)
			if tc.data != nil {
				data = func(m *deploy.Model) (*ForgetData, error) { read = true; return tc.data, nil }
			}
			_, err := st.Forget(ctx, tc.class, data)
			if err == nil {
				t.Fatal("no error")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
			if read != (tc.data != nil && tc.is == nil) {
				t.Errorf("data read: %v", read)
			}
			if st.model.Model.Version() != v {
				t.Errorf("version %d, want %d", st.model.Model.Version(), v)
			}
		})
	}
}

func concat(xs ...[]float32) []float32 {
	var out []float32
	for _, x := range xs {
		out = append(out, x...)
	}
	return out
}

// given is a data func of a fixed ForgetData.
func given(d *ForgetData) func(*deploy.Model) (*ForgetData, error) {
	return func(*deploy.Model) (*ForgetData, error) { return d, nil }
}
