package frigate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// frigateWeighted is Frigate's get_weighted_score
// (frigate/data_processing/real_time/custom_classification.py),
// transcribed: at least 3 entries, the most frequent label (the first
// seen among equals, as Python's max over a dict) with at least 60% of
// the entries, never "none", its mean score.
func frigateWeighted(history []vote) (string, float64) {
	if len(history) < 3 {
		return "", 0
	}
	counts := map[string]int{}
	scores := map[string][]float64{}
	var order []string
	for _, h := range history {
		if _, ok := counts[h.answer]; !ok {
			order = append(order, h.answer)
		}
		counts[h.answer]++
		scores[h.answer] = append(scores[h.answer], h.prob)
	}
	best := order[0]
	for _, l := range order {
		if counts[l] > counts[best] {
			best = l
		}
	}
	if float64(counts[best]) < float64(len(history))*0.6 {
		return "", 0
	}
	var s float64
	for _, v := range scores[best] {
		s += v
	}
	if best == "none" {
		return "", 0
	}
	return best, s / float64(len(scores[best]))
}

// TestRuleIsFrigates: flycl's rule is Frigate's get_weighted_score with
// a rejected try as a vote for Frigate's "none" class, checked on 20,000
// random histories of up to 16 tries (MAX_OBJECT_CLASSIFICATIONS).
func TestRuleIsFrigates(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 1))
	classes := []string{"", "robin", "jay", "wren"}
	rule := Rule{MinTries: 3, Agreement: 0.6}
	decided := 0
	for range 20000 {
		n := 1 + r.IntN(16)
		var ours, theirs []vote
		for range n {
			c := classes[r.IntN(1+r.IntN(len(classes)))] // often few classes: agreement happens
			p := 0.5 + r.Float64()/2
			ours = append(ours, vote{answer: c, prob: p})
			if c == "" {
				c = "none"
			}
			theirs = append(theirs, vote{answer: c, prob: p})
		}
		a, as := rule.decide(ours)
		b, bs := frigateWeighted(theirs)
		if a != b || (a != "" && math.Abs(as-bs) > 1e-12) {
			t.Fatalf("votes %v: flycl %q %v, Frigate %q %v", ours, a, as, b, bs)
		}
		if a != "" {
			decided++
		}
	}
	if decided < 500 {
		t.Fatalf("only %d of 20000 histories decided: the comparison tests little", decided)
	}
}

// TestSlowCamera: a camera whose snapshots come at a byte a second holds
// its own downloads only: another camera's objects are labelled while
// they hang, and each hanging download ends at its deadline as an error.
func TestSlowCamera(t *testing.T) {
	var mu sync.Mutex
	hanging, postedWhileHanging, posts := 0, 0, 0
	release := make(chan struct{})
	fast := solidJPEG(t, 200)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, what, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/api/events/"), "/")
		switch {
		case what == "snapshot.jpg" && strings.HasPrefix(id, "slow"):
			mu.Lock()
			hanging++
			mu.Unlock()
			defer func() { mu.Lock(); hanging--; mu.Unlock() }()
			w.Header().Set("Content-Type", "image/jpeg")
			w.WriteHeader(200)
			for _, b := range fast { // one byte a second, until the client gives up
				w.Write([]byte{b})
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-release:
					return
				case <-time.After(time.Second):
				}
			}
		case what == "snapshot.jpg":
			w.Write(fast)
		case what == "sub_label":
			mu.Lock()
			posts++
			if hanging > 0 {
				postedWhileHanging++
			}
			mu.Unlock()
		}
	}))
	defer srv.Close()
	defer close(release)
	l, err := New(Config{Frigate: srv.URL, Classify: redness{}, Rule: oneTry, Retries: -1, Workers: 4, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		l.Handle(msg("new", fmt.Sprintf("slow%d", i), "slowcam", "bird", [4]int{0, 0, 100, 100}, 1, false))
	}
	for i := range 6 {
		l.Handle(msg("new", fmt.Sprintf("fast%d", i), "fastcam", "bird", [4]int{0, 0, 100, 100}, 1, false))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	for end := time.Now().Add(60 * time.Second); !l.finished() && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	s := l.Stats()
	mu.Lock()
	defer mu.Unlock()
	if s.Labelled != 6 || posts != 6 || s.Errors != 4 {
		t.Fatalf("stats %+v, %d posts: want the 6 fast objects labelled and the 4 slow ones failed at their deadline", s, posts)
	}
	if postedWhileHanging == 0 {
		t.Fatal("no fast object was labelled while a slow download hung")
	}
}

// TestNoRedirectOffHost: a redirect to another port is not followed (no
// request reaches it); one to Frigate's own host and port is.
func TestNoRedirectOffHost(t *testing.T) {
	var mu sync.Mutex
	elsewhere := 0
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		elsewhere++
		mu.Unlock()
		w.Write(solidJPEG(t, 200))
	}))
	defer other.Close()
	ff := &fakeFrigate{red: map[string]uint8{"same": 200}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/api/events/away/snapshot.jpg"):
			http.Redirect(w, r, other.URL+"/x.jpg", http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/api/events/here/snapshot.jpg"):
			http.Redirect(w, r, "/api/events/same/snapshot.jpg", http.StatusFound)
		default:
			ff.ServeHTTP(w, r)
		}
	}))
	defer srv.Close()
	var logs strings.Builder
	var lmu sync.Mutex
	l, err := New(Config{Frigate: srv.URL, Classify: redness{}, Rule: oneTry, Backoff: time.Millisecond,
		Log: slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &lmu}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	l.Handle(msg("new", "away", "front", "bird", [4]int{0, 0, 100, 100}, 1, false))
	l.Handle(msg("new", "here", "front", "bird", [4]int{0, 0, 100, 100}, 1, false))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	for end := time.Now().Add(10 * time.Second); !l.finished() && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	s := l.Stats()
	lmu.Lock()
	defer lmu.Unlock()
	if elsewhere != 0 || s.Errors != 1 || s.Labelled != 1 || !strings.Contains(logs.String(), "redirect off the Frigate host refused") {
		t.Fatalf("%d requests elsewhere, stats %+v, log %s", elsewhere, s, logs.String())
	}
}

// TestLogin: a wrong Frigate password fails Listen at once with
// ErrLogin, logged, before any MQTT connection; a Frigate with auth
// disabled says so; an expired token is renewed by logging in again.
func TestLogin(t *testing.T) {
	ff := &fakeFrigate2{user: "admin", pw: "right", objs: map[string]*frigateObject{}}
	srv := httptest.NewServer(ff)
	defer srv.Close()
	var logs strings.Builder
	var lmu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &lmu}, nil))
	l, err := New(Config{Frigate: srv.URL, User: "admin", Password: "wrong", Classify: redness{}, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Listen(context.Background(), MQTT{Broker: "mqtt://127.0.0.1:1"}, l)
	lmu.Lock()
	logged := logs.String()
	lmu.Unlock()
	if !errors.Is(err, ErrLogin) || !strings.Contains(err.Error(), "wrong user or password") || !strings.Contains(logged, "login failed") {
		t.Fatalf("err %v, log %q", err, logged)
	}
	open := &fakeFrigate2{objs: map[string]*frigateObject{}}
	osrv := httptest.NewServer(open)
	defer osrv.Close()
	l, _ = New(Config{Frigate: osrv.URL, User: "admin", Password: "x", Classify: redness{}})
	if err := l.Login(context.Background()); !errors.Is(err, ErrLogin) || !strings.Contains(err.Error(), "disabled") {
		t.Fatalf("auth disabled: %v", err)
	}
	// An expired token: the next request gets 401, the labeller logs in again.
	red := solidFrame(200)
	ff.objs["a"] = &frigateObject{camera: "c", label: "bird", frame: red, box: [4]int{0, 0, 100, 100}}
	l, _ = New(Config{Frigate: srv.URL, User: "admin", Password: "right", Classify: redness{}, Rule: oneTry})
	if err := l.Login(context.Background()); err != nil {
		t.Fatal(err)
	}
	ff.mu.Lock()
	ff.token = "rotated"
	ff.requests = nil
	ff.mu.Unlock()
	l.Handle(msg("new", "a", "c", "bird", [4]int{0, 0, 100, 100}, 1, false))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	for end := time.Now().Add(10 * time.Second); l.Stats().Labelled == 0 && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	ff.mu.Lock()
	defer ff.mu.Unlock()
	logins := 0
	for _, r := range ff.requests {
		if strings.HasPrefix(r, "POST /api/login") {
			logins++
		}
	}
	if l.Stats().Labelled != 1 || logins != 1 {
		t.Fatalf("stats %+v, %d logins (want 1: after the 401)", l.Stats(), logins)
	}
}

// TestMQTTRefused: a broker that refuses flycl's password is reported
// at once, logged with its reason, and Listen returns.
func TestMQTTRefused(t *testing.T) {
	broker := startMosquitto(t, map[string]string{"flycl": "right"})
	var logs strings.Builder
	var lmu sync.Mutex
	l, _ := New(Config{Frigate: "http://127.0.0.1:1", Classify: redness{}, Log: slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &lmu}, nil))})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := Listen(ctx, MQTT{Broker: broker, Username: "flycl", Password: "wrong"}, l)
	lmu.Lock()
	defer lmu.Unlock()
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "--mqtt-password-file") || !strings.Contains(logs.String(), "refused the login") {
		t.Fatalf("err %v (ctx %v), log %q", err, ctx.Err(), logs.String())
	}
}
