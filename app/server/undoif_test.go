package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/flycl/flycl"
)

// TestUndoVersion: POST /v1/model/undo {"version": N} takes back the
// learn of version N only when it is the last one not undone, else it
// answers 409 and changes nothing; If-Match: "N" does the undo only when
// the model is at version N. Three clients that each learn a class of
// their own and then undo naming their learn's version never take back
// another client's learn (each undo answered 200 took back the client's
// own class; the others were refused with 409), and the model ends with
// exactly the learns no acknowledged undo took back.
func TestUndoVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "u.flycl")
	cfg := testConfig()
	b, err := OpenFileWith(context.Background(), path, FileOptions{Create: func() (*flycl.Model, error) { return flycl.New(cfg, testDim) }, Checkpoints: Checkpoints{Entries: 4}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := newLoopbackServer(t, s)
	var rmu sync.Mutex // the clients below share r
	r := rand.New(rand.NewPCG(7, 8))
	learn := func(label string, c int) uint64 {
		rmu.Lock()
		x, _ := clusters(r, []int{c}, 4)
		rmu.Unlock()
		var lr LearnResponse
		code, _, body := do(t, "POST", hs+"/v1/learn", "application/json", jsonBody(t, Request{Features: x, Label: label}), "", &lr)
		if code != http.StatusOK {
			t.Errorf("learn %s: %d %s", label, code, body)
		}
		return lr.Version
	}
	undo := func(body, ifMatch string) (int, UndoResponse, string) {
		req, _ := http.NewRequest("POST", hs+"/v1/model/undo", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if ifMatch != "" {
			req.Header.Set("If-Match", ifMatch)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0, UndoResponse{}, ""
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var ur UndoResponse
		json.Unmarshal(raw, &ur)
		return resp.StatusCode, ur, string(raw)
	}
	v1 := learn("a", 0)
	v2 := learn("b", 1)
	if code, _, body := undo(fmt.Sprintf(`{"version": %d}`, v1), ""); code != http.StatusConflict {
		t.Fatalf("undo of version %d, not the last learn: %d %s", v1, code, body)
	}
	if code, _, body := undo("{}", fmt.Sprintf(`"%d"`, v2+5)); code != http.StatusConflict {
		t.Fatalf("undo If-Match a version the model is not at: %d %s", code, body)
	}
	if got := b.Current().Version(); got != v2 {
		t.Fatalf("refused undos changed the model: version %d, want %d", got, v2)
	}
	if code, ur, body := undo(fmt.Sprintf(`{"version": %d}`, v2), fmt.Sprintf(`"%d"`, v2)); code != http.StatusOK || len(ur.Undone) != 1 || ur.Undone[0].Version != v2 {
		t.Fatalf("undo of the last learn, version %d: %d %s", v2, code, body)
	}

	// three clients: learn, then undo naming the learn
	var mu sync.Mutex
	var ok, conflicts, wrong int
	kept := map[string]bool{"a": true}
	var wg sync.WaitGroup
	for c := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 8 {
				label := fmt.Sprintf("c%d-%d", c, k)
				v := learn(label, c+2)
				code, ur, body := undo(fmt.Sprintf(`{"version": %d}`, v), "")
				mu.Lock()
				kept[label] = true
				switch {
				case code == http.StatusOK && len(ur.Undone) == 1 && slices.Equal(ur.Undone[0].Classes, []string{label}):
					ok++
					delete(kept, label)
				case code == http.StatusConflict:
					conflicts++
				default:
					wrong++
					t.Errorf("client %d: undo of its learn of %s (version %d): %d %s", c, label, v, code, body)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("24 learns each followed by its client's undo: %d undone, %d refused (409: another change came first), %d wrong", ok, conflicts, wrong)
	var names []string
	for _, cl := range b.Current().Classes() {
		names = append(names, cl.Name)
	}
	var want []string
	for n := range kept {
		want = append(want, n)
	}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("the model has %v, want the learns no undo took back %v", names, want)
	}
}
