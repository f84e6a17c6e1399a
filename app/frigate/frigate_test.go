package frigate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flycl/flycl/app/watch"
	"github.com/flycl/flycl/vision/imageio"
)

// redness answers from the snapshot's mean red: "robin" above 128,
// "unknown" below 64, "sparrow" between, with probability red/255.
type redness struct{}

func (redness) Classify(_ context.Context, img *imageio.RGB) (watch.Prediction, error) {
	var s float64
	for i := 0; i < len(img.Pix); i += 3 {
		s += float64(img.Pix[i])
	}
	r := s / float64(img.W*img.H)
	p := watch.Prediction{Answer: "sparrow"}
	switch {
	case r > 128:
		p.Answer = "robin"
	case r < 64:
		return watch.Prediction{Answer: watch.UnknownAnswer, Unknown: true}, nil
	}
	pr := r / 255
	p.Probability = &pr
	return p, nil
}

func solidJPEG(t testing.TB, red uint8) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 32, 32))
	for i := range 32 * 32 {
		img.SetNRGBA(i%32, i/32, color.NRGBA{red, 40, 40, 255})
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 100}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

type fakeFrigate struct {
	mu      sync.Mutex
	red     map[string]uint8 // id → the snapshot's red
	fail    int              // 503s still to answer
	posts   []string         // "id name score"
	queries []string
}

func (f *fakeFrigate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail > 0 {
		f.fail--
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/api/events/"), "/")
	if len(parts) != 2 {
		http.NotFound(w, r)
		return
	}
	switch {
	case r.Method == http.MethodGet && parts[1] == "snapshot.jpg":
		red, ok := f.red[parts[0]]
		if !ok {
			http.NotFound(w, r)
			return
		}
		f.queries = append(f.queries, r.URL.RawQuery)
		w.Write(solidJPEG(nil, red))
	case r.Method == http.MethodPost && parts[1] == "sub_label":
		var body struct {
			SubLabel      string   `json:"subLabel"`
			SubLabelScore *float64 `json:"subLabelScore"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.SubLabelScore == nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		f.posts = append(f.posts, fmt.Sprintf("%s %s %.4f", parts[0], body.SubLabel, *body.SubLabelScore))
	default:
		http.NotFound(w, r)
	}
}

func msg(typ, id, camera, label string, box [4]int, snap float64, hasSnap bool) []byte {
	return []byte(fmt.Sprintf(`{"type":%q,"before":null,"after":{"id":%q,"camera":%q,"label":%q,"sub_label":null,
"box":[%d,%d,%d,%d],"area":1,"region":[0,0,320,320],"has_snapshot":%t,"snapshot":{"frame_time":%g,"box":[0,0,1,1]},
"false_positive":false,"current_zones":[]}}`, typ, id, camera, label, box[0], box[1], box[2], box[3], hasSnap, snap))
}

// TestLabeller feeds a Frigate-shaped new → update → end sequence to
// Handle and checks the requests against the rules: configured labels
// and cameras, the least box, one classification per snapshot, no
// "unknown", no repeated sub-label, retries of 5xx.
func TestLabeller(t *testing.T) {
	ff := &fakeFrigate{red: map[string]uint8{"a": 200, "b": 100, "c": 30, "small": 200, "car": 200, "back": 200}, fail: 2}
	srv := httptest.NewServer(ff)
	defer srv.Close()
	l, err := New(Config{Frigate: srv.URL, Classify: redness{}, Labels: []string{"bird"}, Cameras: []string{"front"},
		MinBox: 64, Backoff: time.Millisecond, Rule: oneTry})
	if err != nil {
		t.Fatal(err)
	}
	big := [4]int{10, 10, 110, 90} // 100×80
	for _, m := range [][]byte{
		msg("new", "a", "front", "bird", big, 1, true),                       // robin 200/255
		msg("update", "a", "front", "bird", big, 1, true),                    // same snapshot
		msg("update", "a", "front", "bird", big, 2, true),                    // new snapshot, same answer
		msg("new", "b", "front", "bird", big, 1, true),                       // sparrow 100/255
		msg("new", "c", "front", "bird", big, 1, true),                       // unknown
		msg("new", "small", "front", "bird", [4]int{0, 0, 63, 300}, 1, true), // 63 < 64
		msg("new", "car", "front", "car", big, 1, true),                      // label
		msg("new", "back", "back", "bird", big, 1, true),                     // camera
		msg("new", "d", "front", "bird", big, 0, false),                      // not in Frigate's memory: 404
		[]byte(`{"type":"new"}`),                                             // bad
		msg("end", "a", "front", "bird", big, 2, true),
	} {
		l.Handle(m)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for !l.finished() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	want := []string{"a robin 0.7843", "b sparrow 0.3922"} // 200/255, 100/255
	slices.Sort(ff.posts)                                  // several workers: any order
	if strings.Join(ff.posts, "|") != strings.Join(want, "|") {
		t.Fatalf("posts %q, want %q", ff.posts, want)
	}
	for _, q := range ff.queries {
		if q != "bbox=0&crop=1&quality=95&timestamp=0" {
			t.Fatalf("snapshot query %q, want bbox=0&crop=1&quality=95&timestamp=0", q)
		}
	}
	s := l.Stats()
	// a's second snapshot is tried too (queued before its first was decided) but not posted
	// again; its end lets its queued snapshots be tried; d is not in Frigate's memory.
	wantSkip := map[string]int64{SkipSameSnapshot: 1, SkipUnknown: 1, SkipSmall: 1, SkipLabel: 1,
		SkipCamera: 1, SkipGone: 1, SkipEnd: 1}
	if s.Received != 11 || s.Bad != 1 || s.Queued != 5 || s.Classified != 4 || s.Labelled != 2 || s.Errors != 0 || s.Dropped != 0 ||
		fmt.Sprint(s.Skipped) != fmt.Sprint(wantSkip) {
		t.Fatalf("stats %+v, want skipped %v", s, wantSkip)
	}
}

// oneTry decides an object from its first try.
var oneTry = Rule{MinTries: 1, Agreement: 1}

// finished says whether every queued snapshot has had its outcome.
func (l *Labeller) finished() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stats
	return len(l.queue) == 0 && len(l.inFlight) == 0 && s.Classified+s.Errors+s.Skipped[SkipGone] >= s.Queued-s.Dropped
}

// TestLabellerQueueAndErrors: a full queue drops the oldest, counted; a
// 4xx is an error without retries; retries give up after Retries.
func TestLabellerQueueAndErrors(t *testing.T) {
	ff := &fakeFrigate{red: map[string]uint8{"2": 200, "3": 200}}
	srv := httptest.NewServer(ff)
	defer srv.Close()
	l, err := New(Config{Frigate: srv.URL, Classify: redness{}, Queue: 2, Retries: 2, Backoff: time.Millisecond, Rule: oneTry})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"1", "2", "3"} {
		l.Handle(msg("new", id, "front", "bird", [4]int{0, 0, 100, 100}, 1, true))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for l.Stats().Labelled < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	ff.mu.Lock()
	ff.fail = 10 // 503 from now on
	ff.mu.Unlock()
	l.Handle(msg("new", "4", "front", "bird", [4]int{0, 0, 100, 100}, 1, true))
	for l.Stats().Errors < 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	s := l.Stats()
	ff.mu.Lock()
	defer ff.mu.Unlock()
	if s.Dropped != 1 || s.Labelled != 2 || s.Errors != 1 || ff.fail != 10-3 {
		t.Fatalf("stats %+v, 503s left %d (want 7: one try and 2 retries)", s, ff.fail)
	}
	if _, err := New(Config{Frigate: "ftp://x", Classify: redness{}}); err == nil {
		t.Fatal("ftp:// accepted")
	}
}

type named string

func (n named) Classify(context.Context, *imageio.RGB) (watch.Prediction, error) {
	pr := 0.5
	return watch.Prediction{Answer: string(n), Probability: &pr}, nil
}

// TestLabellerLongName: a class name longer than Frigate's 100
// characters is an error, not posted; 100 characters are posted.
func TestLabellerLongName(t *testing.T) {
	for _, c := range []struct {
		n             int
		posts, errors int
	}{{100, 1, 0}, {101, 0, 1}} {
		ff := &fakeFrigate{red: map[string]uint8{"a": 200}}
		srv := httptest.NewServer(ff)
		l, err := New(Config{Frigate: srv.URL, Classify: named(strings.Repeat("é", c.n)), Backoff: time.Millisecond, Rule: oneTry})
		if err != nil {
			t.Fatal(err)
		}
		l.Handle(msg("new", "a", "front", "bird", [4]int{0, 0, 100, 100}, 1, true))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { l.Run(ctx); close(done) }()
		for deadline := time.Now().Add(10 * time.Second); !l.finished() && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
		<-done
		srv.Close()
		if s := l.Stats(); len(ff.posts) != c.posts || s.Errors != int64(c.errors) {
			t.Fatalf("%d characters: posts %q, stats %+v", c.n, ff.posts, s)
		}
	}
}
