package server

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"math/rand/v2"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/store"
)

// TestUndoTo: POST /v1/model/undo {"to": N} takes back every learn after
// version N, newest first, and its answer names each (version, kind,
// classes, samples) and the version the model ends at; the model then
// equals one that learned up to N only. The same request again undoes
// nothing (the model already is as it was at N); {"to": 0} takes the
// model back to as created (no class); {"to": N} past the model's version
// is refused (400) naming it.
func TestUndoTo(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "u.flycl")
	cfg := testConfig()
	cfg.Lambdas = []float64{0.1, 1, 10}
	create := func() (*flycl.Model, error) { return flycl.New(cfg, testDim) }
	b, err := OpenFileWith(context.Background(), path, FileOptions{Create: create, Checkpoints: Checkpoints{Entries: 2}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := newLoopbackServer(t, s)
	r := rand.New(rand.NewPCG(90, 91))
	var first [][]float32
	var firstY []int
	for i, cls := range [][]int{{0, 1}, {2}, {3}} {
		x, y := clusters(r, cls, 8)
		learnFeatures(t, hs, "", x, y)
		if i == 0 {
			first, firstY = x, y
		}
	}
	undo := func(body string) (int, UndoResponse, string) {
		var ur UndoResponse
		code, _, b := do(t, "POST", hs+"/v1/model/undo", "application/json", []byte(body), "", &ur)
		return code, ur, string(b)
	}
	code, ur, body := undo(`{"to": 1}`)
	want := []store.Undone{{Version: 3, Op: "learn", Classes: []string{"delta"}, Samples: 8}, {Version: 2, Op: "learn", Classes: []string{"gamma"}, Samples: 8}}
	if code != http.StatusOK || ur.Version != 5 || ur.To == nil || *ur.To != 1 || len(ur.Undone) != 2 {
		t.Fatalf("undo to 1: %d %s", code, body)
	}
	for i := range want {
		if ur.Undone[i].Version != want[i].Version || ur.Undone[i].Op != want[i].Op || !slices.Equal(ur.Undone[i].Classes, want[i].Classes) || ur.Undone[i].Samples != want[i].Samples {
			t.Fatalf("undo to 1 names %+v, want %+v", ur.Undone, want)
		}
	}
	// the model of the first learn alone
	rb, err := OpenFileWith(context.Background(), filepath.Join(dir, "ref.flycl"), FileOptions{Create: create})
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(firstY))
	for i, c := range firstY {
		names[i] = className(c)
	}
	if _, _, err := rb.Learn(context.Background(), slices.Concat(first...), names, deploy.LearnOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	sameModelContent(t, "undo to version 1", got, rb.model())
	rb.Close()

	// again: nothing to undo, the same version
	if code, ur, body = undo(`{"to": 1}`); code != http.StatusOK || ur.Version != 5 || len(ur.Undone) != 0 || !strings.Contains(body, `"undone":[]`) {
		t.Fatalf("undo to 1 again: %d %s", code, body)
	}
	if code, _, body = undo(`{"to": 9}`); code != http.StatusBadRequest || !strings.Contains(body, "after the model's version 5") {
		t.Fatalf("undo to a version after the model's: %d %s", code, body)
	}
	// to 0: as created
	if code, ur, body = undo(`{"to": 0}`); code != http.StatusOK || ur.Classes != 0 || len(ur.Undone) != 1 || ur.Undone[0].Version != 1 || !slices.Equal(ur.Undone[0].Classes, []string{"alpha", "beta"}) {
		t.Fatalf("undo to 0: %d %s", code, body)
	}
	if m := savedModel(t, path); m.Model.Classes().Len() != 0 || m.Model.Samples() != 0 || m.Model.Version() != 6 {
		t.Fatalf("after undo to 0: %d classes, %d samples, version %d", m.Model.Classes().Len(), m.Model.Samples(), m.Model.Version())
	}
}
