package watch

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestPosterStart: finish delivers what was queued before it returns
// (the receiver's count is the truth), reports ErrUndelivered only when
// no event got through, and stops the delivery: an event sent after
// finish never reaches the receiver.
func TestPosterStart(t *testing.T) {
	for _, tc := range []struct {
		name             string
		failures, status int // the receiver's first failures
		sent             int
		undelivered      bool
	}{
		{name: "receiver answers", sent: 3},
		{name: "receiver recovers", failures: 2, status: http.StatusServiceUnavailable, sent: 3},
		{name: "receiver refuses", failures: 1000, status: http.StatusBadRequest, undelivered: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hook{failures: tc.failures, fail: tc.status}
			srv := httptest.NewServer(h)
			defer srv.Close()
			p := NewPoster(srv.URL, PosterOptions{Backoff: time.Millisecond, Attempts: 4, Log: quiet()})
			finish := p.Start()
			for i := 1; i <= 3; i++ {
				p.Send(Event{ID: int64(i), Class: "c"})
			}
			err := finish(20 * time.Second)
			if errors.Is(err, ErrUndelivered) != tc.undelivered {
				t.Errorf("finish: %v; want undelivered %v", err, tc.undelivered)
			}
			h.mu.Lock()
			got, requests := len(h.got), h.requests
			h.mu.Unlock()
			if got != tc.sent {
				t.Errorf("the receiver got %d events, want %d", got, tc.sent)
			}
			p.Send(Event{ID: 4, Class: "late"})
			time.Sleep(50 * time.Millisecond)
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.requests != requests {
				t.Errorf("after finish the poster still posts: %d requests, %d before", h.requests, requests)
			}
		})
	}
}
