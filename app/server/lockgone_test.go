package server

import (
	"context"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
)

// TestLearnAfterLockRemovedIs503: a learn after the server's lock file
// was removed is refused with 503 (the server is read-only until a
// restart, as docs/DEPLOY.md says), not 500.
func TestLearnAfterLockRemovedIs503(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.flycl")
	b, err := OpenFileWith(context.Background(), path, FileOptions{Create: func() (*flycl.Model, error) { return flycl.New(testConfig(), testDim) }, Checkpoints: Checkpoints{Entries: 4}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := newLoopbackServer(t, s)
	r := rand.New(rand.NewPCG(3, 4))
	x, y := clusters(r, []int{0, 1}, 6)
	learnFeatures(t, hs, "", x, y)
	if err := os.Remove(modelfile.LockPath(path)); err != nil {
		t.Fatal(err)
	}
	x, _ = clusters(r, []int{2}, 4)
	code, _, body := do(t, "POST", hs+"/v1/learn", "application/json", jsonBody(t, Request{Features: x, Label: "gamma"}), "", nil)
	if code != http.StatusServiceUnavailable {
		t.Fatalf("learn after the lock file was removed: %d %s", code, body)
	}
}
