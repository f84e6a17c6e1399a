package watch

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// Event is a debounced change of what the stream shows: the body of a
// webhook POST (JSON) and an "event" line of Run's output.
type Event struct {
	// ID numbers the events of one run from 1: a receiver that sees an
	// ID twice is seeing a retry.
	ID int64 `json:"id"`
	// Camera names the stream (absent for a single stream).
	Camera string    `json:"camera,omitempty"`
	Time   time.Time `json:"time"`
	Source string    `json:"source"`
	// Zone is the zone whose answer changed (absent without zones).
	Zone     string  `json:"zone,omitempty"`
	Class    string  `json:"class"`    // the new answer (a class name, or "unknown")
	Previous string  `json:"previous"` // the answer before ("" for the first)
	Frame    int     `json:"frame"`    // the frame that confirmed the change
	Since    int     `json:"since"`    // the frame where the new answer's run began
	Score    float32 `json:"score"`    // the top class's score on the confirming frame
	// ModelVersion is the version of the model that answered on the
	// confirming frame (the zone's own model for a zone that has one;
	// absent from a classifier that does not tell).
	ModelVersion uint64 `json:"model_version,omitempty"`
}

// PosterStats counts a Poster's events.
type PosterStats struct {
	Sent    int64 `json:"sent"`    // delivered (a 2xx answer)
	Failed  int64 `json:"failed"`  // given up after the last attempt, or refused with a 4xx
	Dropped int64 `json:"dropped"` // pushed out of the full queue by newer events
	Retries int64 `json:"retries"` // attempts after the first
	Queued  int   `json:"queued"`  // waiting now (the one in flight included)
	// LastError is the reason of the last failed attempt ("" if none).
	LastError string `json:"last_error,omitempty"`
}

// ErrUndelivered is the error of a Poster that was given events and
// delivered none (PosterStats.Err).
var ErrUndelivered = errors.New("watch: no webhook event was delivered")

// Err returns an error wrapping ErrUndelivered, with the counts and the
// last failure's reason, when events were given to the Poster and none
// was delivered (all failed, were dropped or are still queued); nil when
// at least one was delivered, or none was given.
func (s PosterStats) Err() error {
	if s.Sent > 0 || s.Failed+s.Dropped+int64(s.Queued) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d failed, %d dropped, %d unsent (last error: %s)", ErrUndelivered, s.Failed, s.Dropped, s.Queued, cmp.Or(s.LastError, "none"))
}

// Poster delivers events to a webhook URL from one goroutine (Run):
// POSTs of JSON, retried with exponential backoff on network errors, 5xx
// and 429 answers, from a queue of bounded length that drops its oldest
// event (counted) when a new one arrives while it is full. Send never
// blocks, so a slow or dead receiver never holds up the frames.
type Poster struct {
	url      string
	client   *http.Client
	queueCap int
	attempts int
	backoff  time.Duration
	maxWait  time.Duration
	log      *slog.Logger

	mu       sync.Mutex
	queue    []Event // FIFO, len ≤ queueCap
	inFlight bool
	stats    PosterStats
	wake     chan struct{} // 1-buffered: something was queued
	idle     chan struct{} // closed and replaced when the queue empties
}

// PosterOptions configure a Poster; zero values take the defaults.
type PosterOptions struct {
	Client   *http.Client  // default: a client with a 10 s timeout
	Queue    int           // queue length (default 256)
	Attempts int           // attempts per event (default 6)
	Backoff  time.Duration // wait before the first retry, doubled after each (default 500 ms)
	MaxWait  time.Duration // longest wait between attempts (default 30 s)
	Log      *slog.Logger  // default: slog.Default()
}

// NewPoster returns a Poster for url; start its Run.
func NewPoster(url string, o PosterOptions) *Poster {
	p := &Poster{url: url, client: o.Client, queueCap: o.Queue, attempts: o.Attempts, backoff: o.Backoff, maxWait: o.MaxWait, log: o.Log,
		wake: make(chan struct{}, 1), idle: make(chan struct{})}
	if p.client == nil {
		p.client = &http.Client{Timeout: 10 * time.Second}
	}
	if p.queueCap <= 0 {
		p.queueCap = 256
	}
	if p.attempts <= 0 {
		p.attempts = 6
	}
	if p.backoff <= 0 {
		p.backoff = 500 * time.Millisecond
	}
	if p.maxWait <= 0 {
		p.maxWait = 30 * time.Second
	}
	if p.log == nil {
		p.log = slog.Default()
	}
	close(p.idle)
	return p
}

// Send queues ev; when the queue is full the oldest queued event is
// dropped (PosterStats.Dropped).
func (p *Poster) Send(ev Event) {
	p.mu.Lock()
	if len(p.queue) == p.queueCap {
		p.queue = append(p.queue[:0], p.queue[1:]...)
		p.stats.Dropped++
		if p.stats.Dropped == 1 || p.stats.Dropped%100 == 0 {
			p.log.Warn("webhook queue full: dropping the oldest events", "dropped", p.stats.Dropped, "queue", p.queueCap)
		}
	}
	if len(p.queue) == 0 && !p.inFlight {
		p.idle = make(chan struct{})
	}
	p.queue = append(p.queue, ev)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Stats returns the counts so far.
func (p *Poster) Stats() PosterStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Queued = len(p.queue)
	if p.inFlight {
		s.Queued++
	}
	return s
}

// Run delivers queued events until ctx is done.
func (p *Poster) Run(ctx context.Context) {
	for {
		p.mu.Lock()
		if len(p.queue) == 0 {
			p.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-p.wake:
				continue
			}
		}
		ev := p.queue[0]
		p.queue = append(p.queue[:0], p.queue[1:]...)
		p.inFlight = true
		p.mu.Unlock()

		ok := p.deliver(ctx, ev)

		p.mu.Lock()
		p.inFlight = false
		if ok {
			p.stats.Sent++
		} else {
			p.stats.Failed++
		}
		if len(p.queue) == 0 {
			close(p.idle)
		}
		p.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
	}
}

// Start delivers the queued events in a goroutine of its own (Run) until
// finish is called, for the life of a watch.Run. finish waits up to flush
// for the queue to empty (a warning when it did not), stops the
// delivery, logs the counters and returns PosterStats.Err: the error of a
// webhook that took no event.
func (p *Poster) Start() (finish func(flush time.Duration) error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	return func(flush time.Duration) error {
		fctx, fcancel := context.WithTimeout(context.Background(), flush)
		if err := p.Flush(fctx); err != nil {
			p.log.Warn("webhook queue not empty at the end", "err", err)
		}
		fcancel()
		cancel()
		<-done
		st := p.Stats()
		p.log.Info("webhook", "sent", st.Sent, "failed", st.Failed, "dropped", st.Dropped, "retries", st.Retries, "unsent", st.Queued, "last_error", st.LastError)
		return st.Err()
	}
}

// Flush waits until every queued event has been delivered or given up,
// or until ctx is done (its error then).
func (p *Poster) Flush(ctx context.Context) error {
	p.mu.Lock()
	idle := p.idle
	p.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// deliver POSTs ev, retrying; it reports whether a 2xx answer came.
func (p *Poster) deliver(ctx context.Context, ev Event) bool {
	body, err := json.Marshal(ev)
	if err != nil {
		p.log.Error("webhook: encode event", "err", err)
		return false
	}
	wait := p.backoff
	for attempt := 1; ; attempt++ {
		retry, err := p.post(ctx, body)
		if err == nil {
			return true
		}
		p.mu.Lock()
		p.stats.LastError = err.Error()
		p.mu.Unlock()
		if !retry || attempt >= p.attempts || ctx.Err() != nil {
			p.log.Warn("webhook: event not delivered", "id", ev.ID, "attempts", attempt, "err", err)
			return false
		}
		// every failure says why (a refused connection, a 5xx), the first
		// of an event at Warn, its retries at Debug
		level := slog.LevelDebug
		if attempt == 1 {
			level = slog.LevelWarn
		}
		p.log.Log(ctx, level, "webhook: attempt failed; retrying", "id", ev.ID, "attempt", attempt, "wait", wait, "err", err)
		p.mu.Lock()
		p.stats.Retries++
		p.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			p.log.Warn("webhook: event not delivered (stopped while retrying)", "id", ev.ID, "attempts", attempt, "err", err)
			return false
		case <-t.C:
		}
		wait = min(2*wait, p.maxWait)
	}
}

// post makes one attempt; retry says whether another may succeed.
func (p *Poster) post(ctx context.Context, body []byte) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return false, fmt.Errorf("watch: webhook: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "flycl-watch")
	resp, err := p.client.Do(req)
	if err != nil {
		return true, fmt.Errorf("watch: webhook: %w", err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return false, nil
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout:
		return true, fmt.Errorf("watch: webhook: %s", resp.Status)
	default:
		return false, fmt.Errorf("watch: webhook: %s (not retried)", resp.Status)
	}
}
