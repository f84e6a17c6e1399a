package server

import (
	"context"
	"encoding/binary"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"math/rand/v2"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/format/modelfile"
)

// TestUndoToGapHTTP: learn a1 (version 1), learn a2 (version 2), the
// server stopped and its journal cut at the start of its last record (a2's
// record lost), learn a3 on a new server: POST /v1/model/undo {"to": 1}
// must be refused (the history cannot take the model back to version 1)
// with the model unchanged, never answered "as it was at version 1".
func TestUndoToGapHTTP(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.flycl")
	cfg := testConfig()
	open := func() (*FileBackend, string, func()) {
		b, err := OpenFileWith(context.Background(), path, FileOptions{Create: func() (*flycl.Model, error) { return flycl.New(cfg, testDim) }, Checkpoints: Checkpoints{Entries: 16}})
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(Config{Backend: b})
		if err != nil {
			t.Fatal(err)
		}
		return b, newLoopbackServer(t, s), func() { s.Close(); b.Close() }
	}
	r := rand.New(rand.NewPCG(31, 32))
	_, hs, stop := open()
	for _, c := range []int{0, 1} {
		x, y := clusters(r, []int{c}, 6)
		learnFeatures(t, hs, "", x, y)
	}
	stop()
	jp := modelfile.JournalPath(path)
	b, err := os.ReadFile(jp)
	if err != nil {
		t.Fatal(err)
	}
	const header = 8 + 4 + 8 + 4 + 16
	last := -1
	for pos := header; pos+8 <= len(b); pos += 8 + int(binary.LittleEndian.Uint32(b[pos:])) {
		last = pos
	}
	if err := os.Truncate(jp, int64(last)); err != nil {
		t.Fatal(err)
	}
	fb, hs, stop := open()
	defer stop()
	x, y := clusters(r, []int{2}, 6)
	learnFeatures(t, hs, "", x, y)
	v := fb.Current().Version()
	code, _, body := do(t, "POST", hs+"/v1/model/undo", "application/json", []byte(`{"to": 1}`), "", nil)
	if code != http.StatusBadRequest || !strings.Contains(string(body), "gap") {
		t.Fatalf("undo to 1 across a lost record: %d %s", code, body)
	}
	if fb.Current().Version() != v || len(fb.Current().Classes()) != 3 {
		t.Fatalf("a refused undo changed the model: version %d, %d classes", fb.Current().Version(), len(fb.Current().Classes()))
	}
}
