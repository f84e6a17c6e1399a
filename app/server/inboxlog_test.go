package server

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestInboxOffPollQuiet: without an inbox, the page's poll of
// GET /v1/inbox (404) logs nothing at INFO, while another 404 and a
// refused learn still do.
func TestInboxOffPollQuiet(t *testing.T) {
	var buf lockedBuffer
	_, hs, _ := testServer(t, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	for range 3 {
		if code, _, b := do(t, "GET", hs.URL+"/v1/inbox", "", nil, "", nil); code != http.StatusNotFound {
			t.Fatalf("GET /v1/inbox without an inbox: %d %s, want 404", code, b)
		}
	}
	if code, _, b := do(t, "GET", hs.URL+"/v1/inbox/abc/image", "", nil, "", nil); code != http.StatusNotFound {
		t.Fatalf("GET /v1/inbox/abc/image: %d %s, want 404", code, b)
	}
	if code, _, _ := do(t, "POST", hs.URL+"/v1/learn", "application/json", []byte("{"), "", nil); code != http.StatusBadRequest {
		t.Fatalf("bad learn: %d, want 400", code)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(buf.String(), "path=/v1/learn") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	out := buf.String()
	if strings.Contains(out, "path=/v1/inbox ") {
		t.Errorf("the inbox poll logged at INFO:\n%s", out)
	}
	for _, want := range []string{"path=/v1/learn", "path=/v1/inbox/abc/image"} {
		if !strings.Contains(out, want) {
			t.Errorf("no INFO line for %s:\n%s", want, out)
		}
	}
}
