package server

import (
	"context"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/store"
	"github.com/flycl/flycl/app/teach"
)

// TestTeachEndpoint: GET /v1/teach answers teach.Compute on the saved
// model and its journal (read back from the files), through the learner
// queue; a second request for the same version reuses it (0 s); its
// bounds and the states it cannot report on are clear errors: no class
// (409), no journal (409), a bad hardest (400), a backend that cannot
// report (501).
func TestTeachEndpoint(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.flycl")
	be, err := OpenFileWith(context.Background(), path, FileOptions{Checkpoints: Checkpoints{Entries: 16},
		Create: func() (*flycl.Model, error) { return flycl.New(testConfig(), testDim) }})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Backend: be, Extractor: gridExtractor{}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptestServer(t, s)
	t.Cleanup(func() { s.Close(); be.Close() })
	if code, _, b := do(t, "GET", hs+"/v1/teach", "", nil, "", nil); code != http.StatusConflict {
		t.Fatalf("no class yet: %d %s, want 409", code, b)
	}
	x, y := clusters(rand.New(rand.NewPCG(3, 4)), []int{0, 1, 2}, 30)
	learnFeatures(t, hs, "", x, y)
	var got TeachResponse
	if code, _, b := do(t, "GET", hs+"/v1/teach?hardest=5", "", nil, "", &got); code != http.StatusOK {
		t.Fatalf("GET /v1/teach: %d %s", code, b)
	}
	// the truth: the report of the files as a reader loads them
	m, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), path, &store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	hist, err := st.History()
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	want, err := teach.Compute(context.Background(), m, hist, teach.Options{Hardest: 5})
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != want.Version || got.Samples != 30 || want.Samples != 30 || len(got.Hardest) != 5 || len(got.Classes) != 3 {
		t.Fatalf("report %+v, want %+v", got.Report, want)
	}
	for i := range want.Classes {
		if got.Classes[i] != want.Classes[i] {
			t.Fatalf("class %d: %+v, want %+v", i, got.Classes[i], want.Classes[i])
		}
	}
	var again TeachResponse
	do(t, "GET", hs+"/v1/teach?hardest=2", "", nil, "", &again)
	if again.Seconds != 0 || len(again.Hardest) != 2 || again.Hardest[0] != got.Hardest[0] {
		t.Fatalf("second request: %g s, %d hardest; want the kept report, cut to 2", again.Seconds, len(again.Hardest))
	}
	for _, q := range []string{"hardest=0", "hardest=x", "hardest=1001"} {
		if code, _, b := do(t, "GET", hs+"/v1/teach?"+q, "", nil, "", nil); code != http.StatusBadRequest || !strings.Contains(string(b), "hardest") {
			t.Fatalf("%s: %d %s, want 400", q, code, b)
		}
	}

	// no journal: every change rewrites the file, the report has no samples
	_, hs2, _ := testServer(t, nil)
	learnFeatures(t, hs2.URL, "", x, y)
	if code, _, b := do(t, "GET", hs2.URL+"/v1/teach", "", nil, "", nil); code != http.StatusConflict || !strings.Contains(string(b), "journal") {
		t.Fatalf("no journal: %d %s, want 409 naming the journal", code, b)
	}
	// a backend that cannot report
	s3, err := New(Config{Backend: viewOnly{be}})
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	if code, _, b := do(t, "GET", httptestServer(t, s3)+"/v1/teach", "", nil, "", nil); code != http.StatusNotImplemented {
		t.Fatalf("a backend without reports: %d %s, want 501", code, b)
	}
}

// viewOnly hides every method of a backend but the Backend interface's.
type viewOnly struct{ Backend }
