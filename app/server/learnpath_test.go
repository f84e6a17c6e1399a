package server

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
	"github.com/flycl/flycl/internal/codec"
)

// sameModel requires the model files at a and b to hold the same model:
// classes, names, counts, version, λ and, bit for bit, G, S and C. (The
// save times and the stage timings of the history may differ.)
func sameModel(t *testing.T, a, b string) {
	t.Helper()
	fa, err := modelfile.Load(a)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := modelfile.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	sa, sb := fa.Snapshot, fb.Snapshot
	ta, tb := sa.State(), sb.State()
	if !slices.Equal(ta.Labels, tb.Labels) || !slices.Equal(ta.Names, tb.Names) || !slices.Equal(ta.Counts, tb.Counts) ||
		ta.Version != tb.Version || ta.Lambda != tb.Lambda || sa.Samples() != sb.Samples() {
		t.Fatalf("models differ: labels %v/%v names %v/%v counts %v/%v version %d/%d lambda %g/%g samples %d/%d",
			ta.Labels, tb.Labels, ta.Names, tb.Names, ta.Counts, tb.Counts, ta.Version, tb.Version, ta.Lambda, tb.Lambda, sa.Samples(), sb.Samples())
	}
	bits := func(what string, x, y []float32) {
		t.Helper()
		if len(x) != len(y) {
			t.Fatalf("%s: %d values, want %d", what, len(x), len(y))
		}
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
				t.Fatalf("%s[%d] = %v, want %v", what, i, x[i], y[i])
			}
		}
	}
	bits("S", sa.S(), sb.S())
	bits("C", sa.Coef(), sb.Coef())
	for i := range ta.Config.M {
		bits("G row", codec.LowerRow(sa, i), codec.LowerRow(sb, i))
	}
}

// TestFailedSaveRestores: the file backend learns in place (no copy of
// the model); when the save fails after the model in memory has learned,
// the learn answers 500, the model file keeps its bytes, the served
// snapshot and its scores stay as they were, and the model is read back
// from the file, so the next learn gives exactly the model of the
// successful learns alone (the truth: a second backend that only ever
// learned those).
func TestFailedSaveRestores(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.flycl")
	be := newFileBackend(t, path)
	s, err := New(Config{Backend: be})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := newLoopbackServer(t, s)
	r := rand.New(rand.NewPCG(40, 41))
	x, y := clusters(r, []int{0, 1}, 10)
	x2, y2 := clusters(r, []int{2}, 4)
	x3, _ := clusters(r, []int{3, 0}, 6) // a new class and more of a known one
	learnFeatures(t, hs, "", x, y)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pr0 PredictResponse
	if code, _, b := do(t, "POST", hs+"/v1/predict", "application/json", jsonBody(t, Request{Features: x, Top: 2}), "", &pr0); code != 200 {
		t.Fatalf("predict: %d %s", code, b)
	}
	unchanged := func(what string) {
		t.Helper()
		after, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(after, before) {
			t.Fatalf("%s: the model file changed (%v)", what, err)
		}
		var pr PredictResponse
		code, _, b := do(t, "POST", hs+"/v1/predict", "application/json", jsonBody(t, Request{Features: x, Top: 2}), "", &pr)
		if code != 200 || pr.Version != 1 || len(s.View().Classes()) != 2 {
			t.Fatalf("%s: predict %d %s", what, code, b)
		}
		for i := range pr.Predictions {
			if !slices.Equal(pr.Predictions[i].Top, pr0.Predictions[i].Top) {
				t.Fatalf("%s: prediction %d is %v, was %v", what, i, pr.Predictions[i].Top, pr0.Predictions[i].Top)
			}
		}
	}
	saves := 0
	be.faults.Save = func(m *deploy.Model, p string) error {
		saves++
		if m.Model.Version() != 2 {
			t.Errorf("save of version %d: the failed learn did not change the model in place", m.Model.Version())
		}
		return errors.New("injected: no space left on device")
	}
	labels := func(y []int) []string {
		out := make([]string, len(y))
		for i, c := range y {
			out[i] = className(c)
		}
		return out
	}
	for range 2 {
		code, _, b := do(t, "POST", hs+"/v1/learn", "application/json", jsonBody(t, Request{Features: x2, Labels: labels(y2)}), "", nil)
		if code != http.StatusInternalServerError || !bytes.Contains(b, []byte("no space left")) {
			t.Fatalf("learn with a failing save: %d %s", code, b)
		}
		unchanged("after a failed learn")
	}
	be.faults.Save = func(m *deploy.Model, p string) error { saves++; return errors.New("injected: I/O error") }
	if code, _, b := do(t, "DELETE", hs+"/v1/classes/alpha", "", nil, "", nil); code != http.StatusInternalServerError {
		t.Fatalf("forget with a failing save: %d %s", code, b)
	}
	unchanged("after a failed forget")
	if saves != 3 {
		t.Fatalf("%d saves tried, want 3", saves)
	}
	be.faults.Save = nil
	if lr := learnFeatures(t, hs, "", x3, []int{3, 0, 3, 0, 3, 0}); lr.Version != 2 {
		t.Fatalf("learn once saving works: version %d, want 2", lr.Version)
	}

	// the truth: a model that learned only the acknowledged learns. The
	// restored model was read back from its file, so its next learn
	// refactors G + λI where a model that never failed would update its
	// factor (equal up to rounding, flycl's TestUpdatePathMatchesRefactor):
	// the truth refactors too, to compare bit for bit.
	ref := filepath.Join(dir, "ref.flycl")
	rb := newFileBackend(t, ref)
	codec.SetUpdateLimit(rb.model().Model, 0)
	for _, l := range []struct {
		x [][]float32
		y []int
	}{{x, y}, {x3, []int{3, 0, 3, 0, 3, 0}}} {
		if _, _, err := rb.Learn(context.Background(), slices.Concat(l.x...), labels(l.y), deploy.LearnOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	sameModel(t, path, ref)
	if got := savedModel(t, path).Model.Version(); got != s.View().Version() {
		t.Fatalf("reopened file: version %d, served %d", got, s.View().Version())
	}
}

// TestUnreadableFileAfterFailedSave: when the model file is replaced
// behind the server (a directory has taken its place) or removed, learns
// and forgets are refused with a 503 that says so, /v1/healthz turns 503
// "read-only", and predictions go on from the snapshot; once the file is
// back as the server saved it, the next learn goes on from it.
func TestUnreadableFileAfterFailedSave(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.flycl")
	s, err := New(Config{Backend: newFileBackend(t, path)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := newLoopbackServer(t, s)
	r := rand.New(rand.NewPCG(42, 43))
	x, y := clusters(r, []int{0, 1}, 10)
	x2, y2 := clusters(r, []int{2}, 4)
	learnFeatures(t, hs, "", x, y)
	kept := filepath.Join(dir, "kept.flycl")
	if err := os.Rename(path, kept); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		code, _, b := do(t, "POST", hs+"/v1/learn", "application/json", jsonBody(t, Request{Features: x2, Label: "gamma"}), "", nil)
		if code != http.StatusServiceUnavailable || !bytes.Contains(b, []byte("changed behind")) || s.View().Version() != 1 || len(s.View().Classes()) != 2 {
			t.Fatalf("learn with the model file replaced: %d %s, version %d", code, b, s.View().Version())
		}
	}
	if code, _, b := do(t, "DELETE", hs+"/v1/classes/alpha", "", nil, "", nil); code != http.StatusServiceUnavailable || len(s.View().Classes()) != 2 {
		t.Fatalf("forget with the model file replaced: %d %s", code, b)
	}
	if code, _, b := do(t, "GET", hs+"/v1/healthz", "", nil, "", nil); code != http.StatusServiceUnavailable || !bytes.Contains(b, []byte(`"read-only"`)) {
		t.Fatalf("healthz with the model file replaced: %d %s", code, b)
	}
	var pr PredictResponse
	if code, _, b := do(t, "POST", hs+"/v1/predict", "application/json", jsonBody(t, Request{Features: x[:2]}), "", &pr); code != 200 || pr.Version != 1 {
		t.Fatalf("predict after a failed save: %d %s", code, b)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	// A vanished file is not taken for a new model.
	if code, _, b := do(t, "POST", hs+"/v1/learn", "application/json", jsonBody(t, Request{Features: x2, Label: "gamma"}), "", nil); code != http.StatusServiceUnavailable || !bytes.Contains(b, []byte("removed")) {
		t.Fatalf("learn with the model file gone: %d %s", code, b)
	}
	if err := os.Rename(kept, path); err != nil {
		t.Fatal(err)
	}
	if lr := learnFeatures(t, hs, "", x2, y2); lr.Version != 2 || lr.Classes != 3 {
		t.Fatalf("learn once the file is back: version %d, %d classes", lr.Version, lr.Classes)
	}
	ref := filepath.Join(dir, "ref.flycl")
	rb := newFileBackend(t, ref)
	for _, l := range []struct {
		x [][]float32
		y []int
	}{{x, y}, {x2, y2}} {
		names := make([]string, len(l.y))
		for i, c := range l.y {
			names[i] = className(c)
		}
		if _, _, err := rb.Learn(context.Background(), slices.Concat(l.x...), names, deploy.LearnOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	sameModel(t, path, ref)
}

// TestLearnOptions: a learn with a fixed λ, and an online learn in
// mini-batches (GCV on each, or a fixed λ), give the classifier of the
// core's own LearnTaskWithLambda / LearnBatch calls on the same data (the
// truth: flycl.Model driven directly), bit for bit, and report the
// number of solves.
func TestLearnOptions(t *testing.T) {
	r := rand.New(rand.NewPCG(50, 51))
	x, y := clusters(r, []int{0, 1, 2}, 30)
	probe, _ := clusters(r, []int{0, 1, 2}, 9)
	for _, tc := range []struct {
		name  string
		opt   deploy.LearnOptions
		steps int
		learn func(m *flycl.Model, x []float32, y []int) error
	}{
		{"fixed lambda", deploy.LearnOptions{Lambda: 0.5}, 1, func(m *flycl.Model, x []float32, y []int) error {
			_, err := m.Learn(context.Background(), x, y, &flycl.LearnOptions{Lambda: 0.5})
			return err
		}},
		{"online GCV", deploy.LearnOptions{Online: true, Batch: 8}, 4, func(m *flycl.Model, x []float32, y []int) error {
			for lo := 0; lo < len(y); lo += 8 {
				hi := min(len(y), lo+8)
				if _, err := m.Learn(context.Background(), x[lo*testDim:hi*testDim], y[lo:hi], nil); err != nil {
					return err
				}
			}
			return nil
		}},
		{"online fixed lambda", deploy.LearnOptions{Online: true, Batch: 12, Lambda: 2}, 3, func(m *flycl.Model, x []float32, y []int) error {
			for lo := 0; lo < len(y); lo += 12 {
				hi := min(len(y), lo+12)
				if _, err := m.Learn(context.Background(), x[lo*testDim:hi*testDim], y[lo:hi], &flycl.LearnOptions{Lambda: 2}); err != nil {
					return err
				}
			}
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, hs, path := testServer(t, nil)
			names := make([]string, len(y))
			for i, c := range y {
				names[i] = className(c)
			}
			var lr LearnResponse
			req := Request{Features: x, Labels: names, Lambda: tc.opt.Lambda, Online: tc.opt.Online, Batch: tc.opt.Batch}
			if code, _, b := do(t, "POST", hs.URL+"/v1/learn", "application/json", jsonBody(t, req), "", &lr); code != 200 {
				t.Fatalf("learn: %d %s", code, b)
			}
			if lr.Steps != tc.steps {
				t.Fatalf("%d steps, want %d", lr.Steps, tc.steps)
			}
			if tc.opt.Lambda > 0 && lr.Lambda != tc.opt.Lambda {
				t.Fatalf("lambda %g, want the fixed %g", lr.Lambda, tc.opt.Lambda)
			}
			ref, err := flycl.New(testConfig(), testDim)
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.learn(ref, slices.Concat(x...), y); err != nil {
				t.Fatal(err)
			}
			if lr.Lambda != ref.Lambda() {
				t.Fatalf("lambda %g, the core's %g", lr.Lambda, ref.Lambda())
			}
			f, err := modelfile.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.Snapshot.Predictor().Scores(context.Background(), slices.Concat(probe...))
			if err != nil {
				t.Fatal(err)
			}
			// The core's predictor.
			want, err := ref.Predictor().Scores(context.Background(), slices.Concat(probe...))
			if err != nil {
				t.Fatal(err)
			}
			// columns: the server's classes by name, the core's by label
			gn, wl := f.Snapshot.Predictor().Classes().Names(), ref.Classes().Labels()
			nc := len(wl)
			for j, n := range gn {
				k := slices.IndexFunc(wl, func(l int) bool { return className(l) == n })
				for i := range len(probe) {
					if math.Float32bits(got[i*nc+j]) != math.Float32bits(want[i*nc+k]) {
						t.Fatalf("score of %s for probe %d: %v, the core's %v", n, i, got[i*nc+j], want[i*nc+k])
					}
				}
			}
		})
	}
}

// TestFailedOnlineLearnRestores: an online learn whose second mini-batch
// fails (features too large for float32 statistics) after the first was
// learned in place answers 400 and leaves the model exactly as before:
// the served snapshot, the file, and the next learn, which equals a model
// that never saw the failed request.
func TestFailedOnlineLearnRestores(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.flycl")
	s, err := New(Config{Backend: newFileBackend(t, path)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := newLoopbackServer(t, s)
	r := rand.New(rand.NewPCG(60, 61))
	x, y := clusters(r, []int{0, 1}, 10)
	learnFeatures(t, hs, "", x, y)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad, _ := clusters(r, []int{2}, 8)
	for _, v := range bad[4:] { // the second batch of 4
		for j := range v {
			v[j] *= 1e30
		}
	}
	code, _, b := do(t, "POST", hs+"/v1/learn", "application/json", jsonBody(t, Request{Features: bad, Label: "gamma", Online: true, Batch: 4}), "", nil)
	if code != http.StatusBadRequest || !bytes.Contains(b, []byte("too large")) {
		t.Fatalf("online learn with a bad second batch: %d %s", code, b)
	}
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, before) || s.View().Version() != 1 || len(s.View().Classes()) != 2 {
		t.Fatalf("the failed learn changed the file (%v) or the served model (version %d)", err, s.View().Version())
	}
	x2, y2 := clusters(r, []int{2, 3}, 6)
	learnFeatures(t, hs, "", x2, y2)
	ref := filepath.Join(dir, "ref.flycl")
	rb := newFileBackend(t, ref)
	for _, l := range []struct {
		x [][]float32
		y []int
	}{{x, y}, {x2, y2}} {
		names := make([]string, len(l.y))
		for i, c := range l.y {
			names[i] = className(c)
		}
		if _, _, err := rb.Learn(context.Background(), slices.Concat(l.x...), names, deploy.LearnOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	sameModel(t, path, ref)
}
