package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/server/api"
)

// readOnlyServer serves path read-only, following the file every poll.
func readOnlyServer(t *testing.T, path string, poll time.Duration) (*ReadOnlyBackend, *httptest.Server) {
	t.Helper()
	b, err := OpenReadOnly(path, ReadOnlyOptions{Poll: poll})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() { hs.Close(); s.Close() })
	return b, hs
}

// waitVersion polls a server's /v1/model until it serves version v.
func waitVersion(t *testing.T, url string, v uint64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var mr ModelResponse
		code, _, b := do(t, "GET", url+"/v1/model", "", nil, "", &mr)
		if code != http.StatusOK {
			t.Fatalf("GET /v1/model: %d %s", code, b)
		}
		if mr.Version == v {
			if !mr.ReadOnly {
				t.Fatalf("/v1/model of a read-only server: read_only false: %s", b)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still serves version %d, the writer wrote %d", url, mr.Version, v)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestReadOnlyFollowsWriter: one writer (a FileBackend with a journal,
// checkpointing every 3 changes) learns, forgets and undoes through its
// server while two read-only servers on the same file answer predictions.
// After every change both readers come to serve the writer's version,
// with scores equal to the bit to those of the file loaded afresh (and to
// each other's), and top classes equal to the writer's. Predictions sent
// to a reader all along are all answered, their versions never going
// back. The readers refuse every change (405, saying they are read-only),
// and report read_only in healthz.
func TestReadOnlyFollowsWriter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.flycl")
	cfg := testConfig()
	cfg.Lambdas = []float64{0.1, 1, 10}
	create := func() (*flycl.Model, error) { return flycl.New(cfg, testDim) }
	wb, err := OpenFileWith(context.Background(), path, FileOptions{Create: create, Checkpoints: Checkpoints{Entries: 3}})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := New(Config{Backend: wb})
	if err != nil {
		t.Fatal(err)
	}
	whs := httptest.NewServer(ws.Handler())
	defer func() { whs.Close(); ws.Close() }()
	r := rand.New(rand.NewPCG(81, 82))
	x, y := clusters(r, []int{0, 1}, 10)
	learnFeatures(t, whs.URL, "", x, y)

	rb1, r1 := readOnlyServer(t, path, 5*time.Millisecond)
	rb2, r2 := readOnlyServer(t, path, 5*time.Millisecond)

	probe, _ := clusters(rand.New(rand.NewPCG(5, 6)), []int{0, 1, 2, 3}, 8)
	predictBody := jsonBody(t, Request{Features: probe, Top: 6})

	// predictions all along on reader 1
	var stop atomic.Bool
	var wg sync.WaitGroup
	var answered atomic.Int64
	errs := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		last := uint64(0)
		for !stop.Load() {
			resp, err := http.Post(r1.URL+"/v1/predict", "application/json", strings.NewReader(string(predictBody)))
			if err != nil {
				errs <- err
				return
			}
			var pr PredictResponse
			err = json.NewDecoder(resp.Body).Decode(&pr)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || err != nil {
				errs <- fmt.Errorf("predict during reloads: %d %v", resp.StatusCode, err)
				return
			}
			if pr.Version < last {
				errs <- fmt.Errorf("a reader went back from version %d to %d", last, pr.Version)
				return
			}
			last = pr.Version
			answered.Add(1)
		}
	}()

	check := func(step string) {
		t.Helper()
		v := wb.Current().Version()
		waitVersion(t, r1.URL, v)
		waitVersion(t, r2.URL, v)
		fresh := savedModel(t, path)
		if fresh.Model.Version() != v {
			t.Fatalf("%s: the file loads as version %d, the writer is at %d", step, fresh.Model.Version(), v)
		}
		flat := slices.Concat(probe...)
		want, err := fresh.Model.Predictor().Scores(context.Background(), flat)
		if err != nil {
			t.Fatal(err)
		}
		for i, rb := range []*ReadOnlyBackend{rb1, rb2} {
			got, err := rb.Current().Scores(context.Background(), flat)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s: reader %d's scores differ from the file's loaded afresh", step, i+1)
			}
		}
		var p1, p2, pw PredictResponse
		for _, c := range []struct {
			url string
			out *PredictResponse
		}{{r1.URL, &p1}, {r2.URL, &p2}, {whs.URL, &pw}} {
			if code, _, b := do(t, "POST", c.url+"/v1/predict", "application/json", predictBody, "", c.out); code != http.StatusOK {
				t.Fatalf("%s: predict: %d %s", step, code, b)
			}
		}
		j1, _ := json.Marshal(p1.Predictions)
		j2, _ := json.Marshal(p2.Predictions)
		if string(j1) != string(j2) || p1.Version != v || p2.Version != v {
			t.Fatalf("%s: the two readers answer differently:\n%s\n%s", step, j1, j2)
		}
		for i := range pw.Predictions {
			if pw.Predictions[i].Class != p1.Predictions[i].Class {
				t.Fatalf("%s: probe %d: writer says %s, reader %s", step, i, pw.Predictions[i].Class, p1.Predictions[i].Class)
			}
		}
	}
	check("first learn")
	for step := range 5 {
		x, y := clusters(r, []int{step % 4, (step + 2) % 4}, 6)
		learnFeatures(t, whs.URL, "", x, y)
		check(fmt.Sprintf("learn %d", step))
	}
	if code, _, b := do(t, "POST", whs.URL+"/v1/model/undo", "application/json", []byte("{}"), "", nil); code != http.StatusOK {
		t.Fatalf("undo: %d %s", code, b)
	}
	check("undo")
	if code, _, b := do(t, "DELETE", whs.URL+"/v1/classes/"+className(3), "", nil, "", nil); code != http.StatusOK {
		t.Fatalf("forget: %d %s", code, b)
	}
	check("forget")
	stop.Store(true)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	if answered.Load() == 0 {
		t.Fatal("no prediction was answered during the reloads")
	}

	// changes are refused, before their bodies are read
	learnBody := jsonBody(t, Request{Features: probe[:1], Labels: []string{"alpha"}})
	for _, c := range []struct{ method, path string }{
		{"POST", "/v1/learn"}, {"DELETE", "/v1/classes/alpha"}, {"POST", "/v1/model/undo"},
	} {
		code, _, b := do(t, c.method, r1.URL+c.path, "application/json", learnBody, "", nil)
		var eb ErrorBody
		if code != http.StatusMethodNotAllowed || json.Unmarshal(b, &eb) != nil || !strings.Contains(eb.Error, "read-only") {
			t.Errorf("%s %s on a read-only server: %d %s, want 405 saying it is read-only", c.method, c.path, code, b)
		}
	}
	var h api.Health
	if code, _, b := do(t, "GET", r2.URL+"/v1/healthz", "", nil, "", &h); code != http.StatusOK || !h.ReadOnly || h.Writable || h.Status != "ok" {
		t.Errorf("healthz of a read-only server: %d %s", code, b)
	}
	var hr HistoryResponse
	if code, _, b := do(t, "GET", r2.URL+"/v1/model/history", "", nil, "", &hr); code != http.StatusOK || len(hr.Changes) == 0 {
		t.Errorf("history of a read-only server: %d %s", code, b)
	}
}

// dirState is what a directory holds: every file's name, mode, size,
// modification time and SHA-256.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = fmt.Sprintf("%v %d %v %x", fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), sha256.Sum256(b))
	}
	return out
}

// TestReadOnlyWritesNothing: a read-only server starts on a model file
// of mode 0444 (its journal too) while a writer holds the lock, answers
// predictions, history and refused changes, reloads and closes, and the
// directory holds exactly what it held before: the same files, with the
// same modes, sizes, modification times and contents (the lock file
// included).
func TestReadOnlyWritesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.flycl")
	wb, err := OpenFileWith(context.Background(), path, FileOptions{
		Create:      func() (*flycl.Model, error) { return flycl.New(testConfig(), testDim) },
		Checkpoints: Checkpoints{Entries: 8}})
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	r := rand.New(rand.NewPCG(91, 92))
	for step := range 3 {
		x, y := clusters(r, []int{step, step + 1}, 6)
		names := make([]string, len(y))
		for i, c := range y {
			names[i] = className(c)
		}
		if _, _, err := wb.Learn(context.Background(), slices.Concat(x...), names, deploy.LearnOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{path, path + ".journal"} {
		if err := os.Chmod(p, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	before := dirState(t, dir)
	if len(before) < 3 {
		t.Fatalf("want the model file, its journal and its lock file: %v", before)
	}

	rb, hs := readOnlyServer(t, path, 0)
	if v, w := rb.Current().Version(), wb.Current().Version(); v != w {
		t.Fatalf("read-only server serves version %d, the writer is at %d", v, w)
	}
	probe, _ := clusters(r, []int{0, 1, 2, 3}, 4)
	var pr PredictResponse
	if code, _, b := do(t, "POST", hs.URL+"/v1/predict", "application/json", jsonBody(t, Request{Features: probe}), "", &pr); code != http.StatusOK {
		t.Fatalf("predict: %d %s", code, b)
	}
	do(t, "GET", hs.URL+"/v1/model/history", "", nil, "", nil)
	do(t, "POST", hs.URL+"/v1/learn", "application/json", jsonBody(t, Request{Features: probe[:1], Labels: []string{"alpha"}}), "", nil)
	do(t, "DELETE", hs.URL+"/v1/classes/alpha", "", nil, "", nil)
	if changed, err := rb.Reload(); changed || err != nil {
		t.Fatalf("Reload of an unchanged file: %v %v", changed, err)
	}
	if err := rb.Close(); err != nil {
		t.Fatal(err)
	}
	after := dirState(t, dir)
	if len(after) != len(before) {
		t.Fatalf("the directory held %v, now %v", before, after)
	}
	for name, st := range before {
		if after[name] != st {
			t.Errorf("%s: %s before, %s after a read-only server", name, st, after[name])
		}
	}
}

// TestReadOnlyKeepsGoodView: a model file half written (the first half
// of a newer version), then damaged, never replaces the version served:
// Reload says why, predictions stay those of the good version, healthz
// stays 200 with the reason; the whole newer file is then served.
func TestReadOnlyKeepsGoodView(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.flycl")
	wb := newFileBackend(t, path)
	r := rand.New(rand.NewPCG(101, 102))
	learn := func(classes ...int) {
		x, y := clusters(r, classes, 8)
		names := make([]string, len(y))
		for i, c := range y {
			names[i] = className(c)
		}
		if _, _, err := wb.Learn(context.Background(), slices.Concat(x...), names, deploy.LearnOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	learn(0, 1)
	v1, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	learn(2, 3)
	v2, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wb.Close()
	if err := os.WriteFile(path, v1, 0o644); err != nil {
		t.Fatal(err)
	}
	rb, hs := readOnlyServer(t, path, 0)
	good := rb.Current()
	probe, _ := clusters(r, []int{0, 1, 2, 3}, 8)
	flat := slices.Concat(probe...)
	want, err := good.Scores(context.Background(), flat)
	if err != nil {
		t.Fatal(err)
	}
	damaged := slices.Clone(v2)
	damaged[len(damaged)/2] ^= 0xff
	for _, c := range []struct {
		name string
		b    []byte
	}{{"half written", v2[:len(v2)/2]}, {"one byte flipped", damaged}, {"empty", nil}} {
		if err := os.WriteFile(path, c.b, 0o644); err != nil {
			t.Fatal(err)
		}
		changed, err := rb.Reload()
		if changed || err == nil {
			t.Fatalf("%s: Reload served it (%v, %v)", c.name, changed, err)
		}
		if rb.Current() != good {
			t.Fatalf("%s: the view served was replaced", c.name)
		}
		var pr PredictResponse
		if code, _, b := do(t, "POST", hs.URL+"/v1/predict", "application/json", jsonBody(t, Request{Features: probe, Top: 2}), "", &pr); code != http.StatusOK || pr.Version != good.Version() {
			t.Fatalf("%s: predict: %d %s", c.name, code, b)
		}
		got, _ := rb.Current().Scores(context.Background(), flat)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: scores changed", c.name)
		}
		var h api.Health
		if code, _, b := do(t, "GET", hs.URL+"/v1/healthz", "", nil, "", &h); code != http.StatusOK || !strings.Contains(h.Error, "still serving version") {
			t.Fatalf("%s: healthz %d %s, want 200 saying the change was not loaded", c.name, code, b)
		}
	}
	if err := os.WriteFile(path, v2, 0o644); err != nil {
		t.Fatal(err)
	}
	if changed, err := rb.Reload(); !changed || err != nil {
		t.Fatalf("the whole newer file: %v %v", changed, err)
	}
	if v, w := rb.Current().Version(), savedModel(t, path).Model.Version(); v != w || v == good.Version() {
		t.Fatalf("serves version %d, the file holds %d (was %d)", v, w, good.Version())
	}
	var h api.Health
	if code, _, b := do(t, "GET", hs.URL+"/v1/healthz", "", nil, "", &h); code != http.StatusOK || h.Error != "" || h.Version != rb.Current().Version() {
		t.Fatalf("healthz after the reload: %d %s", code, b)
	}
}
