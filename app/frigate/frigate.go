package frigate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/internal/fielderr"
	"github.com/flycl/flycl/vision/imageio"
)

var nan = math.NaN()

// Skip reasons counted in Stats.Skipped.
const (
	SkipEnd           = "end"            // the object ended
	SkipLabel         = "label"          // a label not configured
	SkipCamera        = "camera"         // a camera not configured
	SkipFalsePositive = "false_positive" // Frigate marks it a false positive
	SkipSmall         = "small"          // the box's shorter side is under MinBox
	SkipNoSnapshot    = "no_snapshot"    // Frigate has no picture of it yet
	SkipSameSnapshot  = "same_snapshot"  // this snapshot was tried already
	SkipUnknown       = "unknown"        // a try the model answered unknown
	SkipLowProb       = "low_probability"
	SkipSameLabel     = "same_label"      // the object already has the agreed sub-label
	SkipOtherSubLabel = "other_sub_label" // another source (face, plate, Frigate's classifier) set its sub-label
	SkipDecided       = "decided"         // the object was decided already: no more tries
	SkipMaxTries      = "max_tries"       // the object had MaxTries tries
	SkipGone          = "gone"            // Frigate no longer has a picture of it (404)
	SkipNoAgreement   = "no_agreement"    // the object ended with tries that did not agree
)

// Config configures a Labeller. A field's flag tag is flycl frigate's flag
// for it (internal/flagbind.Names: how the command names the field in a
// FieldError).
type Config struct {
	// Frigate is the base URL of Frigate's HTTP API: http://HOST:5000
	// (no login) or https://HOST:8971 (with User and Password).
	Frigate string `flag:"frigate"`
	// User and Password log in on Frigate's authenticated port (Login);
	// the user must have Frigate's admin role (the sub_label endpoint
	// requires it: frigate/api/event.py, require_role(["admin"])).
	User, Password string
	// Cookie is the name of Frigate's token cookie (its
	// auth.cookie_name; "": frigate_token).
	Cookie string
	// Classify classifies a snapshot (a watch.ModelClassifier).
	Classify watch.Classifier
	// Labels and Cameras keep only these (empty: all; spaces around a
	// name are trimmed, as in "person, car", and empty names dropped).
	Labels, Cameras []string
	// MinBox is the least shorter side of an object's box, in pixels.
	MinBox float64 `flag:"min-box"`
	// MinProbability is the least probability of a try that votes for
	// its class (a try below it votes for none).
	MinProbability float64 `flag:"min-probability"`
	// Rule decides an object from its tries (zero: Frigate's 3 tries
	// and 60%); MaxTries bounds the tries of one object (0: Frigate's
	// 16).
	Rule     Rule
	MaxTries int `flag:"max-tries"`
	// Overwrite lets a sub-label set by another source (face
	// recognition, licence plates, Frigate's classifiers, a person) be
	// replaced; by default such an object is left alone.
	Overwrite bool
	// Quality and Height are the snapshot's JPEG quality (0: 95) and
	// height in pixels (0: Frigate's crop as it is); see snapshotURL.
	Quality int `flag:"quality"`
	Height  int `flag:"height"`
	// Queue bounds the objects waiting for classification (≤ 0: 64); when
	// full, the oldest is dropped and counted.
	Queue int
	// Workers is how many snapshots are fetched at once (≤ 0: 4), and
	// PerCamera how many of them one camera may hold (≤ 0: half of
	// Workers, at least 1), so that a slow camera blocks no other.
	Workers, PerCamera int
	// Timeout is the overall deadline of one HTTP request, body included
	// (0: 10 s).
	Timeout time.Duration
	// Retries is how many times an HTTP request is retried after a
	// network error, 429 or 5xx (< 0: none; 0: 3), with a backoff
	// doubling from Backoff (0: 200 ms).
	Retries int
	Backoff time.Duration
	// HTTP is the client (nil: http.DefaultTransport); its redirects are
	// replaced by the Labeller's rule (never off Frigate's host and port).
	HTTP *http.Client
	// MaxPixels bounds a snapshot's size (0: imageio's default).
	MaxPixels int64
	// Keep, when set, sees every try: the object, the crop, its JPEG
	// bytes and the prediction (flycl frigate --inbox keeps the unsure
	// ones for labelling). It must not block for long.
	Keep func(t Try)
	// Model names the model in the tracked_object_update messages (""
	// : "flycl").
	Model string
	// NoUpdate turns off the tracked_object_update messages Listen
	// publishes.
	NoUpdate bool
	Log      *slog.Logger
}

// Try is one classification of an object's snapshot, as Keep sees it.
type Try struct {
	ID, Camera, Label string
	Image             *imageio.RGB
	JPEG              []byte
	Prediction        watch.Prediction
	// Features are the crop's features when the classifier gives them
	// (a watch.FeatureClassifier) and Keep is set.
	Features []float32
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
	http *http.Client

	classify sync.Mutex // one classification at a time (the model's)

	mu       sync.Mutex
	token    string
	queue    []job
	changed  chan struct{} // closed (and replaced) when queue or inFlight change
	inFlight map[string]int
	stats    Stats
	objs     map[string]*object
	notify   func(payload []byte) // publishes a tracked_object_update (set by Listen)
}

// object is what a Labeller knows of one tracked object.
type object struct {
	keys    map[float64]bool // snapshots tried or queued
	votes   []vote
	sub     string // the sub-label Frigate reported last
	posted  string // the sub-label flycl set
	decided bool   // posted, or being posted, or never to be
	pending int    // its snapshots queued or being tried
	ended   bool   // Frigate ended it: forgotten when nothing is pending
}

// done counts one of st's snapshots tried (or dropped), and forgets an
// ended object with nothing pending (l.mu held).
func (l *Labeller) done(id string, st *object) {
	st.pending--
	if st.ended && st.pending <= 0 && l.objs[id] == st {
		delete(l.objs, id)
	}
}

type job struct {
	id, camera, label string
	key               float64
}

// MaxSubLabel is the longest sub-label Frigate takes (its API's
// EventsSubLabelBody: subLabel at most 100 characters, subLabelScore in
// (0, 1]; frigate/api/defs/request/events_body.py).
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
		return nil, badField("Frigate", cfg.Frigate, "want http://HOST:PORT")
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
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.PerCamera <= 0 {
		cfg.PerCamera = max(1, cfg.Workers/2)
	}
	if cfg.Rule == (Rule{}) {
		cfg.Rule = Rule{MinTries: 3, Agreement: 0.6}
	}
	if cfg.MaxTries <= 0 {
		cfg.MaxTries = 16
	}
	if cfg.Rule.MinTries > cfg.MaxTries {
		return nil, badField("MaxTries", cfg.MaxTries, fmt.Sprintf("must be ≥ the least tries (%d)", cfg.Rule.MinTries))
	}
	if cfg.Quality <= 0 {
		cfg.Quality = 95
	}
	if cfg.Cookie == "" {
		cfg.Cookie = "frigate_token"
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	l := &Labeller{cfg: cfg, base: u, changed: make(chan struct{}), inFlight: map[string]int{},
		stats: Stats{Skipped: map[string]int64{}}, objs: map[string]*object{}}
	l.http = l.client()
	return l, nil
}

// A FieldError is a value of a Config field out of its range, named by
// the field ("MinBox", "MinProbability", "Frigate", "Rule.MinTries", …);
// a command names the field by its flag (Name). It is the one field
// error type of the module (internal/fielderr).
type FieldError = fielderr.Error

// badField is field's value v out of its range: "NAME PROBLEM, got V"
// ("frigate: NAME "V": PROBLEM" for the Frigate URL).
func badField(field string, v any, problem string) *FieldError {
	return &FieldError{Field: field, Value: v, Problem: problem, Message: func(e *FieldError) string {
		if e.Field == "Frigate" {
			return fmt.Sprintf("frigate: %s %q: %s", e.NameOf(e.Field), e.Value, e.Problem)
		}
		return fmt.Sprintf("%s %s, got %v", e.NameOf(e.Field), e.Problem, e.Value)
	}}
}

// Check checks the bounds a command takes from its user, so that they
// can be checked before the model loads; New checks them too. An error
// is a *FieldError.
func (cfg Config) Check() error {
	switch {
	case !(cfg.MinBox >= 0):
		return badField("MinBox", cfg.MinBox, "must be ≥ 0")
	case !(cfg.MinProbability >= 0 && cfg.MinProbability <= 1):
		return badField("MinProbability", cfg.MinProbability, "must be in [0, 1]")
	case cfg.Rule != (Rule{}) && cfg.Rule.MinTries < 1:
		return badField("Rule.MinTries", cfg.Rule.MinTries, "must be ≥ 1")
	case cfg.Rule != (Rule{}) && !(cfg.Rule.Agreement > 0.5 && cfg.Rule.Agreement <= 1):
		// Over a half: two classes can never both agree.
		return badField("Rule.Agreement", cfg.Rule.Agreement, "must be in (0.5, 1]")
	case cfg.MaxTries < 0 || (cfg.MaxTries > 0 && cfg.Rule.MinTries > cfg.MaxTries):
		return badField("MaxTries", cfg.MaxTries, "must be ≥ the least tries")
	case cfg.Quality < 0 || cfg.Quality > 100:
		// Frigate's SnapshotsConfig.quality: 0–100.
		return badField("Quality", cfg.Quality, "must be in [1, 100]")
	case cfg.Height < 0:
		return badField("Height", cfg.Height, "must be ≥ 0")
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

// decide says whether a message's object is to be tried, or the reason
// it is skipped (a Skip constant). st is what is known of it (nil: new).
//
// A snapshot is the object's best picture so far, kept in Frigate's
// memory while the object is tracked (the events message's "snapshot":
// tracked_object.py to_dict, its thumbnail_data) and served by
// GET /api/events/{id}/snapshot.jpg whether snapshots are enabled or
// not (frigate/api/media.py event_snapshot: an object not yet in the
// database is looked up in camera_state.tracked_objects). has_snapshot
// only says whether Frigate will save it to disk at the end (snapshots
// enabled, required zones entered), so it is not waited for.
func (l *Labeller) decide(m *Message, st *object) string {
	o := m.After
	switch {
	case len(l.cfg.Labels) > 0 && !slices.Contains(l.cfg.Labels, o.Label):
		return SkipLabel
	case len(l.cfg.Cameras) > 0 && !slices.Contains(l.cfg.Cameras, o.Camera):
		return SkipCamera
	case o.FalsePositive:
		return SkipFalsePositive
	case o.ShortSide() < l.cfg.MinBox:
		return SkipSmall
	case o.Snapshot == nil:
		return SkipNoSnapshot
	case !l.cfg.Overwrite && o.SubLabel != "" && (st == nil || o.SubLabel != st.posted):
		return SkipOtherSubLabel
	case st == nil:
		return ""
	case st.decided:
		return SkipDecided
	case len(st.keys) >= l.cfg.MaxTries:
		return SkipMaxTries
	case st.keys[o.SnapshotKey()]:
		return SkipSameSnapshot
	}
	return ""
}

// Handle takes one message of the events topic: it parses it and queues
// its object's snapshot when it is to be tried.
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
	o := m.After
	st := l.objs[o.ID]
	if st != nil {
		st.sub = o.SubLabel
	}
	if m.Type == "end" {
		l.stats.Skipped[SkipEnd]++
		if st != nil && !st.decided && st.pending == 0 && len(st.votes) > 0 {
			l.stats.Skipped[SkipNoAgreement]++
			l.cfg.Log.Info("frigate: object ended undecided", "id", o.ID, "tries", len(st.votes))
		}
		if st != nil {
			// Its snapshots still queued are tried: an ended object's
			// snapshot is served when Frigate saved it (has_snapshot),
			// and its sub-label can still be set (event.py set_sub_label
			// looks in the database too).
			st.ended = true
			st.pending++
			l.done(o.ID, st)
		}
		return
	}
	if r := l.decide(m, st); r != "" {
		l.stats.Skipped[r]++
		if r == SkipOtherSubLabel && st != nil {
			st.decided = true
		}
		return
	}
	if st == nil {
		if len(l.objs) >= maxTracked {
			for k := range l.objs { // forget one (objects that never ended)
				delete(l.objs, k)
				break
			}
		}
		st = &object{keys: map[float64]bool{}, sub: o.SubLabel}
		l.objs[o.ID] = st
	}
	st.keys[o.SnapshotKey()] = true
	st.pending++
	if len(l.queue) >= l.cfg.Queue {
		old := l.queue[0]
		l.queue = l.queue[1:]
		l.stats.Dropped++
		if ost := l.objs[old.id]; ost != nil {
			delete(ost.keys, old.key) // that snapshot may be tried again
			l.done(old.id, ost)
		}
		l.cfg.Log.Warn("frigate: queue full, dropped the oldest object", "id", old.id)
	}
	l.queue = append(l.queue, job{id: o.ID, camera: o.Camera, label: o.Label, key: o.SnapshotKey()})
	l.stats.Queued++
	l.signal()
}

// signal wakes the workers (l.mu held).
func (l *Labeller) signal() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// Run tries queued objects, Workers at a time, until ctx is done; what
// is still queued then is dropped and counted.
func (l *Labeller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for range l.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j, ok := l.next(ctx)
				if !ok {
					return
				}
				err := l.try(ctx, j)
				l.mu.Lock()
				if st := l.objs[j.id]; st != nil {
					l.done(j.id, st)
				}
				l.inFlight[j.camera]--
				if l.inFlight[j.camera] == 0 {
					delete(l.inFlight, j.camera)
				}
				if err != nil && ctx.Err() == nil {
					l.stats.Errors++
				}
				l.signal()
				l.mu.Unlock()
				if err != nil && ctx.Err() == nil {
					l.cfg.Log.Error("frigate: labelling failed", "id", j.id, "camera", j.camera, "err", err)
				}
			}
		}()
	}
	wg.Wait()
	l.mu.Lock()
	l.stats.Dropped += int64(len(l.queue))
	l.queue = nil
	l.mu.Unlock()
}

// next takes the oldest queued job whose camera holds fewer than
// PerCamera workers, waiting for one; false when ctx is done.
func (l *Labeller) next(ctx context.Context) (job, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		if ctx.Err() != nil {
			return job{}, false
		}
		for i, j := range l.queue {
			if l.inFlight[j.camera] < l.cfg.PerCamera {
				l.queue = slices.Delete(l.queue, i, i+1)
				l.inFlight[j.camera]++
				return j, true
			}
		}
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-ch:
		}
		l.mu.Lock()
	}
}

func (l *Labeller) skip(r string) {
	l.mu.Lock()
	l.stats.Skipped[r]++
	l.mu.Unlock()
}

// snapshotURL is the object's snapshot as flycl classifies it:
//
//   - bbox=0 and timestamp=0: no box, label or time drawn on the
//     picture (Frigate draws the box by default: SnapshotsConfig
//     bounding_box=True; the query overrides the camera's config,
//     media.py _resolve_snapshot_settings);
//   - crop=1: Frigate's crop around the box (util/image.py
//     get_snapshot_bytes: calculate_region with multiplier 1.1 and at
//     least 300 pixels square), the framing flycl's models are taught
//     from (flycl frigate --inbox keeps these crops);
//   - quality (95 by default, where the camera's snapshot quality is 60):
//     a crop of about 300×300 at 95 is some 30–60 KB, and JPEG blocks
//     at 60 are a texture the backbone sees;
//   - height (the model's resize, 256 for the presets, set by flycl
//     frigate): Frigate scales with INTER_AREA (an area average, no
//     aliasing) before encoding, so the bytes carried are what the
//     model uses and flycl's own resize is then the identity.
func (l *Labeller) snapshotURL(id string) *url.URL {
	u := l.endpoint(id, "snapshot.jpg")
	q := url.Values{"bbox": {"0"}, "timestamp": {"0"}, "crop": {"1"}, "quality": {strconv.Itoa(l.cfg.Quality)}}
	if l.cfg.Height > 0 {
		q.Set("height", strconv.Itoa(l.cfg.Height))
	}
	u.RawQuery = q.Encode()
	return u
}

// try fetches, classifies and votes one snapshot of an object, and posts
// the object's sub-label when its tries agree.
func (l *Labeller) try(ctx context.Context, j job) error {
	body, err := l.do(ctx, http.MethodGet, l.snapshotURL(j.id), nil)
	if se := (*StatusError)(nil); errors.As(err, &se) && se.Code == http.StatusNotFound {
		// Ended and not saved (snapshots off), or no frame in the cache.
		l.skip(SkipGone)
		return nil
	}
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	img, err := imageio.Decoder{MaxPixels: l.cfg.MaxPixels}.Decode(body)
	if err != nil {
		return fmt.Errorf("snapshot of %s: %w", j.id, err)
	}
	var p watch.Prediction
	var x []float32
	l.classify.Lock()
	if fc, ok := l.cfg.Classify.(watch.FeatureClassifier); ok && l.cfg.Keep != nil {
		p, x, err = fc.ClassifyFeatures(ctx, img)
	} else {
		p, err = l.cfg.Classify.Classify(ctx, img)
	}
	l.classify.Unlock()
	if err != nil {
		return fmt.Errorf("classify %s: %w", j.id, err)
	}
	if l.cfg.Keep != nil {
		l.cfg.Keep(Try{ID: j.id, Camera: j.camera, Label: j.label, Image: img, JPEG: body, Prediction: p, Features: x})
	}
	v := vote{answer: p.Answer, prob: nan}
	if p.Probability != nil {
		v.prob = *p.Probability
	}
	l.mu.Lock()
	l.stats.Classified++
	switch {
	case p.Unknown || p.Answer == watch.UnknownAnswer:
		l.stats.Skipped[SkipUnknown]++
		v.answer = ""
	case p.Probability != nil && *p.Probability < l.cfg.MinProbability:
		l.stats.Skipped[SkipLowProb]++
		v.answer = ""
	}
	st := l.objs[j.id]
	if st == nil { // ended meanwhile
		l.mu.Unlock()
		return nil
	}
	st.votes = append(st.votes, v)
	if st.decided {
		l.mu.Unlock()
		return nil
	}
	best, score := l.cfg.Rule.decide(st.votes)
	switch {
	case best == "":
		l.mu.Unlock()
		return nil
	case st.sub != "" && st.sub != st.posted && !l.cfg.Overwrite:
		st.decided = true
		l.stats.Skipped[SkipOtherSubLabel]++
		l.mu.Unlock()
		return nil
	case st.sub == best:
		st.decided = true
		l.stats.Skipped[SkipSameLabel]++
		l.mu.Unlock()
		return nil
	}
	st.decided = true
	// The answer counts as flycl's before the request is sent: Frigate
	// publishes the object with this sub-label as soon as it is set, and
	// that message may arrive before the response.
	before := st.posted
	st.posted = best
	tries := len(st.votes)
	l.mu.Unlock()
	if utf8.RuneCountInString(best) > MaxSubLabel {
		return fmt.Errorf("class %.40q… of %s: Frigate takes sub-labels of at most %d characters", best, j.id, MaxSubLabel)
	}
	req := map[string]any{"subLabel": best}
	if score == score {
		req["subLabelScore"] = roundScore(score)
	}
	b, _ := json.Marshal(req)
	if _, err := l.do(ctx, http.MethodPost, l.endpoint(j.id, "sub_label"), b); err != nil {
		l.mu.Lock()
		st.decided = false // a later try may post
		st.posted = before
		l.mu.Unlock()
		return fmt.Errorf("sub_label: %w", err)
	}
	l.mu.Lock()
	l.stats.Labelled++
	notify := l.notify
	l.mu.Unlock()
	if notify != nil {
		notify(updateMessage(j.id, j.camera, cmpOr(l.cfg.Model, "flycl"), best, req["subLabelScore"], time.Now()))
	}
	l.cfg.Log.Info("frigate: sub-label set", "id", j.id, "camera", j.camera, "sub_label", best, "score", req["subLabelScore"], "tries", tries)
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

// updateMessage is the tracked_object_update message Frigate's own object
// classifier publishes when it sets a sub-label
// (frigate/embeddings/maintainer.py: type "classification"
// (TrackedObjectUpdateTypesEnum), id, camera, timestamp, model,
// sub_label, score), so that what listens to Frigate's classifications
// (its UI, Home Assistant's Frigate integration) hears flycl's too.
func updateMessage(id, camera, model, subLabel string, score any, now time.Time) []byte {
	b, _ := json.Marshal(map[string]any{"type": "classification", "id": id, "camera": camera,
		"timestamp": float64(now.UnixNano()) / 1e9, "model": model, "sub_label": subLabel, "score": score})
	return b
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
