package frigate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/vision/imageio"
)

// Skip reasons counted in Stats.Skipped.
const (
	SkipEnd           = "end"            // the object ended
	SkipLabel         = "label"          // a label not configured
	SkipCamera        = "camera"         // a camera not configured
	SkipFalsePositive = "false_positive" // Frigate marks it a false positive
	SkipSmall         = "small"          // the box's shorter side is under MinBox
	SkipNoSnapshot    = "no_snapshot"    // Frigate has no snapshot of it
	SkipSameSnapshot  = "same_snapshot"  // this snapshot was classified already
	SkipUnknown       = "unknown"        // the model answered unknown
	SkipLowProb       = "low_probability"
	SkipSameLabel     = "same_label" // the object already has this sub-label
)

// Config configures a Labeller.
type Config struct {
	// Frigate is the base URL of Frigate's HTTP API (http://HOST:5000).
	Frigate string
	// Classify classifies a snapshot (a watch.ModelClassifier).
	Classify watch.Classifier
	// Labels and Cameras keep only these (empty: all; spaces around a
	// name are trimmed, as in "person, car", and empty names dropped).
	Labels, Cameras []string
	// MinBox is the least shorter side of an object's box, in pixels.
	MinBox float64
	// MinProbability is the least probability of an answer that is
	// posted (answers without a probability are posted).
	MinProbability float64
	// Queue bounds the objects waiting for classification (≤ 0: 64); when
	// full, the oldest is dropped and counted.
	Queue int
	// Retries is how many times an HTTP request is retried after a
	// network error, 429 or 5xx (< 0: none; 0: 3), with a backoff
	// doubling from Backoff (0: 200 ms).
	Retries int
	Backoff time.Duration
	// HTTP is the client (nil: one with a 30 s timeout).
	HTTP *http.Client
	// MaxPixels bounds a snapshot's size (0: imageio's default).
	MaxPixels int64
	Log       *slog.Logger
}

// Stats counts what a Labeller did.
type Stats struct {
	Received   int64            `json:"received"`
	Bad        int64            `json:"bad"`
	Queued     int64            `json:"queued"`
	Dropped    int64            `json:"dropped"`
	Classified int64            `json:"classified"`
	Labelled   int64            `json:"labelled"`
	Errors     int64            `json:"errors"`
	Skipped    map[string]int64 `json:"skipped"`
}

// Labeller classifies Frigate's tracked objects and sets their
// sub-labels. Handle takes messages (from one goroutine); Run classifies
// them.
type Labeller struct {
	cfg  Config
	base *url.URL

	mu     sync.Mutex
	queue  []job
	wake   chan struct{}
	stats  Stats
	seen   map[string]float64 // id → snapshot key queued or classified
	posted map[string]string  // id → sub-label posted
}

type job struct {
	id  string
	sub string // the sub-label Frigate reports
}

// MaxSubLabel is the longest sub-label Frigate takes (its API's
// EventsSubLabelBody: subLabel at most 100 characters, subLabelScore in
// (0, 1]).
const MaxSubLabel = 100

// maxTracked bounds the objects remembered (ended objects are forgotten).
const maxTracked = 10000

// New returns a Labeller.
func New(cfg Config) (*Labeller, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	u, err := url.Parse(cfg.Frigate)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &FieldError{Field: "Frigate", Value: cfg.Frigate, Problem: "want http://HOST:PORT"}
	}
	if cfg.Classify == nil {
		return nil, errors.New("frigate: no classifier")
	}
	cfg.Labels, cfg.Cameras = trimAll(cfg.Labels), trimAll(cfg.Cameras)
	if cfg.Queue <= 0 {
		cfg.Queue = 64
	}
	if cfg.Retries == 0 {
		cfg.Retries = 3
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 200 * time.Millisecond
	}
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return &Labeller{cfg: cfg, base: u, wake: make(chan struct{}, 1),
		stats: Stats{Skipped: map[string]int64{}}, seen: map[string]float64{}, posted: map[string]string{}}, nil
}

// A FieldError is a value of a Config field out of its range, named by
// the field ("MinBox", "MinProbability", "Frigate"); a command maps the
// field to its flag (Name).
type FieldError struct {
	Field   string
	Value   any
	Problem string // e.g. "must be ≥ 0"
	// Name, when set, names the field in Error (a command's flag).
	Name func(field string) string
}

func (e *FieldError) Error() string {
	name := e.Field
	if e.Name != nil {
		name = e.Name(e.Field)
	}
	if e.Field == "Frigate" {
		return fmt.Sprintf("frigate: %s %q: %s", name, e.Value, e.Problem)
	}
	return fmt.Sprintf("%s %s, got %v", name, e.Problem, e.Value)
}

// Check checks the bounds a command takes from its user (MinBox,
// MinProbability), so that they can be checked before the model loads;
// New checks them too. An error is a *FieldError.
func (cfg Config) Check() error {
	switch {
	case !(cfg.MinBox >= 0):
		return &FieldError{Field: "MinBox", Value: cfg.MinBox, Problem: "must be ≥ 0"}
	case !(cfg.MinProbability >= 0 && cfg.MinProbability <= 1):
		return &FieldError{Field: "MinProbability", Value: cfg.MinProbability, Problem: "must be in [0, 1]"}
	}
	return nil
}

// trimAll returns the non-empty of s with their spaces trimmed (names
// given as "person, car").
func trimAll(s []string) []string {
	var out []string
	for _, v := range s {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// Stats returns a copy of the counters.
func (l *Labeller) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stats
	s.Skipped = make(map[string]int64, len(l.stats.Skipped))
	for k, v := range l.stats.Skipped {
		s.Skipped[k] = v
	}
	return s
}

// Decide says whether a message's object is to be classified, or the
// reason it is skipped (a Skip constant).
func (l *Labeller) decide(m *Message) string {
	o := m.After
	switch {
	case m.Type == "end":
		return SkipEnd
	case len(l.cfg.Labels) > 0 && !slices.Contains(l.cfg.Labels, o.Label):
		return SkipLabel
	case len(l.cfg.Cameras) > 0 && !slices.Contains(l.cfg.Cameras, o.Camera):
		return SkipCamera
	case o.FalsePositive:
		return SkipFalsePositive
	case o.ShortSide() < l.cfg.MinBox:
		return SkipSmall
	case !o.HasSnapshot:
		return SkipNoSnapshot
	}
	if k, ok := l.seen[o.ID]; ok && k == o.SnapshotKey() {
		return SkipSameSnapshot
	}
	return ""
}

// Handle takes one message of the events topic: it parses it and queues
// its object when it is to be classified.
func (l *Labeller) Handle(payload []byte) {
	m, err := ParseMessage(payload)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stats.Received++
	if err != nil {
		l.stats.Bad++
		l.cfg.Log.Warn("frigate: message refused", "err", err)
		return
	}
	id := m.After.ID
	if r := l.decide(m); r != "" {
		l.stats.Skipped[r]++
		if m.Type == "end" {
			delete(l.seen, id)
			delete(l.posted, id)
		}
		return
	}
	if len(l.seen) >= maxTracked {
		for k := range l.seen { // forget one (objects that never ended)
			delete(l.seen, k)
			delete(l.posted, k)
			break
		}
	}
	l.seen[id] = m.After.SnapshotKey()
	if len(l.queue) >= l.cfg.Queue {
		old := l.queue[0]
		l.queue = l.queue[1:]
		l.stats.Dropped++
		delete(l.seen, old.id) // a later snapshot of it is classified
		l.cfg.Log.Warn("frigate: queue full, dropped the oldest object", "id", old.id)
	}
	l.queue = append(l.queue, job{id: id, sub: m.After.SubLabel})
	l.stats.Queued++
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Run classifies queued objects until ctx is done; what is still queued
// then is dropped and counted.
func (l *Labeller) Run(ctx context.Context) {
	for {
		l.mu.Lock()
		var j job
		ok := len(l.queue) > 0
		if ok {
			j, l.queue = l.queue[0], l.queue[1:]
		}
		l.mu.Unlock()
		if ctx.Err() != nil {
			l.mu.Lock()
			l.stats.Dropped += int64(len(l.queue))
			if ok {
				l.stats.Dropped++
			}
			l.queue = nil
			l.mu.Unlock()
			return
		}
		if !ok {
			select {
			case <-ctx.Done():
			case <-l.wake:
			}
			continue
		}
		if err := l.label(ctx, j); err != nil && ctx.Err() == nil {
			l.mu.Lock()
			l.stats.Errors++
			l.mu.Unlock()
			l.cfg.Log.Error("frigate: labelling failed", "id", j.id, "err", err)
		}
	}
}

func (l *Labeller) skip(r string) {
	l.mu.Lock()
	l.stats.Skipped[r]++
	l.mu.Unlock()
}

func (l *Labeller) label(ctx context.Context, j job) error {
	u := l.endpoint(j.id, "snapshot.jpg")
	u.RawQuery = url.Values{"crop": {"1"}}.Encode()
	body, err := l.do(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	img, err := imageio.Decoder{MaxPixels: l.cfg.MaxPixels}.Decode(body)
	if err != nil {
		return fmt.Errorf("snapshot of %s: %w", j.id, err)
	}
	p, err := l.cfg.Classify.Classify(ctx, img)
	if err != nil {
		return fmt.Errorf("classify %s: %w", j.id, err)
	}
	l.mu.Lock()
	l.stats.Classified++
	prev, had := l.posted[j.id]
	l.mu.Unlock()
	switch {
	case p.Unknown || p.Answer == watch.UnknownAnswer:
		l.skip(SkipUnknown)
		return nil
	case p.Probability != nil && *p.Probability < l.cfg.MinProbability:
		l.skip(SkipLowProb)
		return nil
	case (had && prev == p.Answer) || j.sub == p.Answer:
		l.skip(SkipSameLabel)
		return nil
	}
	if utf8.RuneCountInString(p.Answer) > MaxSubLabel {
		return fmt.Errorf("class %.40q… of %s: Frigate takes sub-labels of at most %d characters", p.Answer, j.id, MaxSubLabel)
	}
	req := map[string]any{"subLabel": p.Answer}
	if p.Probability != nil {
		req["subLabelScore"] = roundScore(*p.Probability)
	}
	b, _ := json.Marshal(req)
	if _, err := l.do(ctx, http.MethodPost, l.endpoint(j.id, "sub_label").String(), b); err != nil {
		return fmt.Errorf("sub_label: %w", err)
	}
	l.mu.Lock()
	l.stats.Labelled++
	l.posted[j.id] = p.Answer
	l.mu.Unlock()
	l.cfg.Log.Info("frigate: sub-label set", "id", j.id, "sub_label", p.Answer, "score", req["subLabelScore"])
	return nil
}

// roundScore keeps a score within Frigate's (0, 1] and to 4 decimals.
func roundScore(p float64) float64 {
	return min(1, max(0.0001, float64(int64(p*10000+0.5))/10000))
}

func (l *Labeller) endpoint(id, what string) *url.URL {
	u := *l.base
	u.Path = l.base.Path + "/api/events/" + id + "/" + what
	u.RawPath = l.base.Path + "/api/events/" + url.PathEscape(id) + "/" + what
	return &u
}

// ErrStatus is wrapped by errors for an HTTP answer that is not 2xx.
var ErrStatus = errors.New("frigate: HTTP status")

// do sends one request with retries and returns the body of a 2xx answer
// (at most 32 MiB).
func (l *Labeller) do(ctx context.Context, method, u string, body []byte) ([]byte, error) {
	wait := l.cfg.Backoff
	for try := 0; ; try++ {
		b, retry, err := l.once(ctx, method, u, body)
		if err == nil {
			return b, nil
		}
		if !retry || try >= l.cfg.Retries || ctx.Err() != nil {
			return nil, err
		}
		l.cfg.Log.Warn("frigate: retrying", "method", method, "url", u, "err", err, "in", wait)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait *= 2
	}
}

func (l *Labeller) once(ctx context.Context, method, u string, body []byte) ([]byte, bool, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, false, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := l.cfg.HTTP.Do(req)
	if err != nil {
		return nil, true, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, true, err
	}
	if resp.StatusCode/100 != 2 {
		retry := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
		return nil, retry, fmt.Errorf("%w %d from %s %s: %.200s", ErrStatus, resp.StatusCode, method, u, b)
	}
	return b, false, nil
}
