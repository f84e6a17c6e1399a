package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"math/rand/v2"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/internal/codec"
)

// TestUndoAndHistory: over HTTP, with the journal, three learns then an
// undo give the model of the first two (same classes, counts, λ and
// predictions as a backend that never saw the third: flycl.Model.Unlearn
// is exact up to the rounding its own test bounds), as a new version;
// the undo survives a restart (it is in the journal), history lists the
// changes, undo --to goes back further, and with nothing left to undo the
// answer is 400 saying so.
func TestUndoAndHistory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "u.flycl")
	cfg := testConfig()
	cfg.Lambdas = []float64{0.1, 1, 10}
	create := func() (*flycl.Model, error) { return flycl.New(cfg, testDim) }
	open := func() *Server {
		b, err := OpenFileWith(context.Background(), path, FileOptions{Create: create, Checkpoints: Checkpoints{Entries: 2}})
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(Config{Backend: b})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	hs := newLoopbackServer(t, s)
	r := rand.New(rand.NewPCG(80, 81))
	var learns [][2]any
	for _, cls := range [][]int{{0, 1}, {2, 1}, {3}} {
		x, y := clusters(r, cls, 8)
		learnFeatures(t, hs, "", x, y)
		learns = append(learns, [2]any{x, y})
	}
	ref := func(k int) *deploy.Model {
		b, err := OpenFileWith(context.Background(), filepath.Join(t.TempDir(), "ref.flycl"), FileOptions{Create: create})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		for _, l := range learns[:k] {
			x, y := l[0].([][]float32), l[1].([]int)
			names := make([]string, len(y))
			for i, c := range y {
				names[i] = className(c)
			}
			if _, _, err := b.Learn(context.Background(), slices.Concat(x...), names, deploy.LearnOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		return b.model()
	}
	var ur UndoResponse
	if code, _, b := do(t, "POST", hs+"/v1/model/undo", "application/json", []byte(`{}`), "", &ur); code != 200 || ur.Version != 4 {
		t.Fatalf("undo: %d %s", code, b)
	}
	// the response names the learn it took back: version 3, class 3's 8 samples
	if len(ur.Undone) != 1 || ur.Undone[0].Version != 3 || ur.Undone[0].Op != "learn" || !slices.Equal(ur.Undone[0].Classes, []string{className(3)}) || ur.Undone[0].Samples != 8 {
		t.Fatalf("undo says it took back %+v, want the learn of version 3 (%s, 8 samples)", ur.Undone, className(3))
	}
	s.Close()
	s = open() // the undo is in the journal
	hs = newLoopbackServer(t, s)
	got, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := ref(2)
	sameModelContent(t, "undo of the last learn", got, want)
	var hr HistoryResponse
	if code, _, b := do(t, "GET", hs+"/v1/model/history", "", nil, "", &hr); code != 200 || len(hr.Changes) != 4 || hr.Changes[3].Op != "undo" || hr.Changes[3].Undoes != 3 || !hr.Changes[1].Undoable || hr.Changes[2].Undoable {
		t.Fatalf("history: %d %s", code, b)
	}
	if code, _, b := do(t, "POST", hs+"/v1/model/undo", "application/json", []byte(`{"to": 1}`), "", &ur); code != 200 || ur.Version != 5 {
		t.Fatalf("undo to 1: %d %s", code, b)
	}
	if len(ur.Undone) != 1 || ur.Undone[0].Version != 2 || ur.Undone[0].Samples != 8 {
		t.Fatalf("undo to 1 says it took back %+v, want the learn of version 2 (8 samples)", ur.Undone)
	}
	if got, err = store.Load(path); err != nil {
		t.Fatal(err)
	}
	sameModelContent(t, "undo to version 1", got, ref(1))
	if code, _, b := do(t, "POST", hs+"/v1/model/undo", "application/json", []byte(`{"to": 7}`), "", nil); code != http.StatusBadRequest {
		t.Fatalf("undo to a version that is not a learn: %d %s", code, b)
	}
	if code, _, b := do(t, "POST", hs+"/v1/model/undo", "application/json", []byte(`{}`), "", &ur); code != 200 || ur.Classes != 0 || len(ur.Undone) != 1 || ur.Undone[0].Version != 1 {
		t.Fatalf("undo of the first learn: %d %s", code, b)
	}
	if code, _, b := do(t, "POST", hs+"/v1/model/undo", "application/json", []byte(`{}`), "", nil); code != http.StatusBadRequest {
		t.Fatalf("undo with nothing left: %d %s", code, b)
	}
	s.Close()
}

// sameModelContent: the same classes, counts and λ, the same calibration
// (rejection, temperature and leave-one-out pool, bit for bit: an undo
// puts back those of the version before), and the same top-1 predictions
// on probe vectors.
func sameModelContent(t *testing.T, what string, a, b *deploy.Model) {
	t.Helper()
	if !slices.Equal(a.Model.Classes().Names(), b.Model.Classes().Names()) || !slices.Equal(a.Model.Classes().Counts(), b.Model.Classes().Counts()) || a.Model.Lambda() != b.Model.Lambda() || a.Model.Samples() != b.Model.Samples() {
		t.Fatalf("%s: %v %v λ=%g n=%d, want %v %v λ=%g n=%d", what, a.Model.Classes().Names(), a.Model.Classes().Counts(), a.Model.Lambda(), a.Model.Samples(),
			b.Model.Classes().Names(), b.Model.Classes().Counts(), b.Model.Lambda(), b.Model.Samples())
	}
	if a.Model.Rejection() != b.Model.Rejection() || !slices.Equal(codec.CalibrationPool(a.Model), codec.CalibrationPool(b.Model)) || !(a.Model.Rejection().Temperature > 0) {
		t.Fatalf("%s: rejection %+v (pool of %d), want %+v (pool of %d)", what, a.Model.Rejection(), len(codec.CalibrationPool(a.Model)), b.Model.Rejection(), len(codec.CalibrationPool(b.Model)))
	}
	r := rand.New(rand.NewPCG(9, 9))
	x, _ := clusters(r, []int{0, 1, 2, 3}, 10)
	pa, err := a.Model.Predictor().Predict(context.Background(), slices.Concat(x...))
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := b.Model.Predictor().Predict(context.Background(), slices.Concat(x...))
	if !slices.Equal(pa, pb) {
		t.Fatalf("%s: predictions differ", what)
	}
}

// FuzzUndoRequest: the undo body is outside bytes: parsing never panics,
// and what it accepts is empty or one JSON object that encoding/json reads
// as the same request.
func FuzzUndoRequest(f *testing.F) {
	for _, s := range []string{"", "{}", `{"to": 3}`, `{"to": -1}`, `{"to": 1e3}`, `{"from": 2}`, `{} {}`, `[1]`, "{\"to\": 18446744073709551615}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := parseUndoRequest(b)
		if err != nil {
			return
		}
		if len(bytes.TrimSpace(b)) == 0 {
			if req.To != nil {
				t.Fatalf("empty body gave %+v", req)
			}
			return
		}
		var again UndoRequest
		if err := json.Unmarshal(b, &again); err != nil || (again.To == nil) != (req.To == nil) || again.To != nil && *again.To != *req.To {
			t.Fatalf("accepted %q as %+v; encoding/json: %+v, %v", b, req, again, err)
		}
	})
}

// FuzzIfMatch: the undo's If-Match header is outside bytes: any header
// is refused with an error naming If-Match, or read as no condition
// (empty or "*") or as the version it quotes, which written as an ETag
// ("N", or W/"N") reads back the same.
func FuzzIfMatch(f *testing.F) {
	for _, s := range []string{"", "*", ` "3" `, `W/"3"`, `3`, `"18446744073709551615"`, `"18446744073709551616"`, `"-1"`, `"3`, `W/""`, `"+3"`, `"0x10"`, `"3", "4"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		v, err := parseIfMatch(h)
		if err != nil {
			if v != nil || !strings.Contains(err.Error(), "If-Match") {
				t.Fatalf("%q: %v, %v", h, v, err)
			}
			return
		}
		if v == nil {
			if s := strings.TrimSpace(h); s != "" && s != "*" {
				t.Fatalf("%q read as no condition", h)
			}
			return
		}
		for _, etag := range []string{`"` + strconv.FormatUint(*v, 10) + `"`, `W/"` + strconv.FormatUint(*v, 10) + `"`} {
			if again, err := parseIfMatch(etag); err != nil || again == nil || *again != *v {
				t.Fatalf("%q read as %d; %s reads as %v, %v", h, *v, etag, again, err)
			}
		}
	})
}
