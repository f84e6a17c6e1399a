package server

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl"
)

// TestUndoBeforeAnyLearn: an undo on a server whose new model has learned
// nothing is refused (400) saying just that, not blaming a journal that is
// there (flycl serve keeps one) or an older flycl.
func TestUndoBeforeAnyLearn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.flycl")
	cfg := testConfig()
	b, err := OpenFileWith(context.Background(), path, FileOptions{Create: func() (*flycl.Model, error) { return flycl.New(cfg, testDim) }})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := newLoopbackServer(t, s)
	for _, body := range []string{`{}`, `{"to": 0}`} {
		code, _, msg := do(t, "POST", hs+"/v1/model/undo", "application/json", []byte(body), "", nil)
		if code != 400 || !strings.Contains(string(msg), "learned nothing yet") || strings.Contains(string(msg), "older flycl") {
			t.Errorf("undo %s before any learn: %d %s", body, code, msg)
		}
	}
}
