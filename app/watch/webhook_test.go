package watch

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// hook is a webhook receiver that answers fail for the first failures
// requests, then 200, and records the events it accepted.
type hook struct {
	mu       sync.Mutex
	requests int
	failures int
	fail     int
	got      []Event
}

func (h *hook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.requests++
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "want a JSON POST", http.StatusBadRequest)
		return
	}
	if h.requests <= h.failures {
		http.Error(w, "not now", h.fail)
		return
	}
	var ev Event
	if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.got = append(h.got, ev)
}

func startPoster(t *testing.T, p *Poster) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// TestPosterRetries: a receiver that fails (500, 503, 429) and then
// answers gets every event once, in order; the failed attempts were
// retried. A 4xx is not retried.
func TestPosterRetries(t *testing.T) {
	for _, c := range []struct {
		status, failures       int
		sent, failed, requests int
	}{
		{http.StatusInternalServerError, 3, 5, 0, 8},
		{http.StatusServiceUnavailable, 1, 5, 0, 6},
		{http.StatusTooManyRequests, 2, 5, 0, 7},
		{http.StatusBadRequest, 1, 4, 1, 5}, // the first event is refused, not retried
	} {
		h := &hook{failures: c.failures, fail: c.status}
		srv := httptest.NewServer(h)
		p := NewPoster(srv.URL, PosterOptions{Backoff: time.Millisecond, Attempts: 10, Log: quiet()})
		startPoster(t, p)
		for i := 1; i <= 5; i++ {
			p.Send(Event{ID: int64(i), Class: "c"})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		if err := p.Flush(ctx); err != nil {
			t.Fatalf("status %d: flush: %v", c.status, err)
		}
		cancel()
		srv.Close()
		st := p.Stats()
		h.mu.Lock()
		if st.Sent != int64(c.sent) || st.Failed != int64(c.failed) || h.requests != c.requests || len(h.got) != c.sent {
			t.Fatalf("status %d ×%d: %+v, %d requests, %d received; want sent %d failed %d requests %d", c.status, c.failures, st, h.requests, len(h.got), c.sent, c.failed, c.requests)
		}
		for i, ev := range h.got {
			if want := int64(5 - c.sent + i + 1); ev.ID != want {
				t.Fatalf("status %d: event %d has id %d, want %d (in order, once)", c.status, i, ev.ID, want)
			}
		}
		h.mu.Unlock()
	}
}

// TestPosterBoundedQueue: a receiver that never answers. The queue never
// holds more than its length, the oldest events are dropped and counted,
// and every event is accounted for: sent + failed + dropped + waiting.
func TestPosterBoundedQueue(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	const queue, events = 8, 1000
	p := NewPoster(srv.URL, PosterOptions{Client: &http.Client{Timeout: 20 * time.Millisecond}, Queue: queue, Attempts: 2, Backoff: time.Millisecond, Log: quiet()})
	startPoster(t, p)
	for i := range events {
		p.Send(Event{ID: int64(i + 1)})
		if st := p.Stats(); st.Queued > queue+1 {
			t.Fatalf("after %d events %d wait (queue %d + 1 in flight)", i+1, st.Queued, queue)
		}
	}
	st := p.Stats()
	if st.Dropped < events-queue-1 || st.Sent != 0 {
		t.Fatalf("%+v: want at least %d dropped, none sent", st, events-queue-1)
	}
	if total := st.Sent + st.Failed + st.Dropped + int64(st.Queued); total != events {
		t.Fatalf("%+v: %d events accounted for, want %d", st, total, events)
	}
	// the newest events are the ones kept
	p.mu.Lock()
	last := p.queue[len(p.queue)-1].ID
	p.mu.Unlock()
	if last != events {
		t.Fatalf("the last queued event is %d, want %d", last, events)
	}
}
