package frigate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// compact is a message on one line (the fuzz input holds one a line).
func compact(tb testing.TB, b []byte) []byte {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		tb.Fatal(err)
	}
	return out.Bytes()
}

// FuzzHandle feeds a sequence of events messages (one a line), as a
// broker delivers them, to a Labeller whose workers are not running:
// whatever the messages, Handle never panics, every message is counted
// once (refused, skipped for one reason, or queued), the queue holds at
// most Config.Queue snapshots, and each queued snapshot belongs to an
// object the Labeller still remembers, which counts it as pending and
// as tried or queued.
func FuzzHandle(f *testing.F) {
	lines := func(msgs ...[]byte) []byte {
		var b [][]byte
		for _, m := range msgs {
			b = append(b, compact(f, m))
		}
		return bytes.Join(b, []byte("\n"))
	}
	box := [4]int{0, 0, 100, 100}
	// a bird seen three times, then ended
	f.Add(lines(msg("new", "a", "front", "bird", box, 1, false), msg("update", "a", "front", "bird", box, 2, false),
		msg("update", "a", "front", "bird", box, 2, false), msg("end", "a", "front", "bird", box, 3, true)))
	// more snapshots than the queue holds, and more tries than MaxTries
	f.Add(lines(msg("new", "a", "front", "bird", box, 1, false), msg("update", "b", "front", "bird", box, 1, false),
		msg("update", "a", "front", "bird", box, 2, false), msg("update", "c", "back", "bird", box, 1, false),
		msg("update", "a", "front", "bird", box, 3, false), msg("update", "a", "front", "bird", box, 4, false)))
	// skipped: another label, a small box, a false positive, no snapshot, another sub-label
	f.Add(lines(msg("new", "c", "front", "car", box, 1, false), msg("new", "s", "front", "bird", [4]int{0, 0, 5, 5}, 1, false),
		[]byte(strings.Replace(string(msg("new", "f", "front", "bird", box, 1, false)), `"false_positive":false`, `"false_positive":true`, 1)),
		[]byte(`{"type":"new","after":{"id":"n","camera":"front","label":"bird","box":[0,0,100,100]}}`),
		[]byte(strings.Replace(string(msg("update", "o", "front", "bird", box, 1, false)), `"sub_label":null`, `"sub_label":["Bob",0.9]`, 1))))
	// an end before anything, an end twice, a message again after the end
	f.Add(lines(msg("end", "e", "front", "bird", box, 1, false), msg("new", "e", "front", "bird", box, 1, false),
		msg("end", "e", "front", "bird", box, 1, false), msg("end", "e", "front", "bird", box, 1, false),
		msg("update", "e", "front", "bird", box, 2, false)))
	f.Add(lines([]byte(docMessage), []byte(`null`)))
	f.Add([]byte("{\"type\":\"new\"}\n\n{}\nnot json"))
	f.Fuzz(func(t *testing.T, b []byte) {
		const queue = 3
		l, err := New(Config{Frigate: "http://127.0.0.1:1", Classify: redness{}, Labels: []string{"bird"},
			MinBox: 10, Queue: queue, Rule: oneTry, MaxTries: 2})
		if err != nil {
			t.Fatal(err)
		}
		msgs := bytes.Split(b, []byte("\n"))
		for _, m := range msgs {
			l.Handle(m)
		}
		s := l.Stats()
		skipped := int64(0)
		for _, n := range s.Skipped {
			skipped += n
		}
		switch {
		case s.Received != int64(len(msgs)):
			t.Fatalf("%d messages, %d received", len(msgs), s.Received)
		case s.Bad+skipped+s.Queued != s.Received:
			t.Fatalf("%d received: %d refused + %d skipped + %d queued", s.Received, s.Bad, skipped, s.Queued)
		case s.Skipped[SkipNoAgreement] != 0:
			t.Fatalf("%d objects undecided with no try made", s.Skipped[SkipNoAgreement])
		case int64(len(l.queue)) != s.Queued-s.Dropped || len(l.queue) > queue:
			t.Fatalf("%d queued, %d dropped, %d in a queue of %d", s.Queued, s.Dropped, len(l.queue), queue)
		}
		pending := 0
		for _, st := range l.objs {
			if st.pending < 0 || (st.ended && st.pending == 0) {
				t.Fatalf("an object with %d pending (ended %v) is remembered", st.pending, st.ended)
			}
			pending += st.pending
		}
		if pending != len(l.queue) {
			t.Fatalf("%d snapshots pending, %d queued", pending, len(l.queue))
		}
		for _, j := range l.queue {
			st := l.objs[j.id]
			if st == nil || !st.keys[j.key] {
				t.Fatalf("queued snapshot %v of an object forgotten or not marked tried", j)
			}
			if !validID(j.id) || j.camera == "" || j.label != "bird" {
				t.Fatalf("queued %+v", j)
			}
		}
	})
}

// bigPNG is a 300×300 PNG (a few hundred bytes), over the fuzz target's
// MaxPixels.
func bigPNG(tb testing.TB) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 300, 300))); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// answers is a Frigate whose answers to the login and to the snapshot
// are the fuzzer's; a sub-label is accepted. It records the sub-labels
// posted and the Authorization header of the snapshot request.
type answers struct {
	loginStatus int
	setCookie   string
	loginBody   []byte
	snapStatus  int
	snapBody    []byte
	auth        []string
	posts       [][]byte
}

func (a *answers) RoundTrip(r *http.Request) (*http.Response, error) {
	resp := &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, Body: http.NoBody}
	switch {
	case r.URL.Path == "/api/login":
		resp.StatusCode = a.loginStatus
		if a.setCookie != "" {
			resp.Header.Add("Set-Cookie", a.setCookie)
		}
		resp.Body = io.NopCloser(bytes.NewReader(a.loginBody))
	case strings.HasSuffix(r.URL.Path, "/snapshot.jpg"):
		a.auth = append(a.auth, r.Header.Get("Authorization"))
		resp.StatusCode = a.snapStatus
		resp.Body = io.NopCloser(bytes.NewReader(a.snapBody))
	case strings.HasSuffix(r.URL.Path, "/sub_label"):
		b, _ := io.ReadAll(r.Body)
		a.posts = append(a.posts, b)
	default:
		resp.StatusCode = 404
	}
	return resp, nil
}

// FuzzAnswers gives a Labeller Frigate's answers from the fuzzer: the
// login's status, Set-Cookie and body, and the snapshot's status and
// body. Whatever they are, nothing panics; a login either fails with
// ErrLogin or takes the token from the frigate_token cookie, which the
// snapshot request then carries; a 404 snapshot is skipped as gone,
// another status that is not 2xx is a *StatusError with its code, and a
// 2xx body is decoded within MaxPixels or refused naming the object; a
// sub-label posted is one Frigate takes (at most MaxSubLabel characters,
// a score in (0, 1]).
func FuzzAnswers(f *testing.F) {
	jpg := solidJPEG(f, 200)
	ok := "frigate_token=jwt.1; Path=/; Max-Age=86400; HttpOnly"
	f.Add(uint16(200), ok, []byte{}, uint16(200), jpg)
	f.Add(uint16(200), ok, []byte{}, uint16(200), solidJPEG(f, 100))
	f.Add(uint16(200), ok, []byte{}, uint16(200), solidJPEG(f, 30)) // unknown
	f.Add(uint16(200), ok, []byte{}, uint16(404), []byte(`{"success":false,"message":"Snapshot not available"}`))
	f.Add(uint16(200), ok, []byte{}, uint16(401), []byte{})
	f.Add(uint16(200), ok, []byte{}, uint16(503), []byte("busy"))
	f.Add(uint16(200), ok, []byte{}, uint16(200), jpg[:len(jpg)/2])
	f.Add(uint16(200), ok, []byte{}, uint16(200), bigPNG(f))
	f.Add(uint16(200), "other=x", []byte{}, uint16(200), jpg)
	f.Add(uint16(200), "frigate_token=", []byte{}, uint16(200), jpg)
	f.Add(uint16(200), `frigate_token="a b"; frigate_token=c`, []byte{}, uint16(200), jpg)
	f.Add(uint16(401), "", []byte(`{"message":"Login failed"}`), uint16(200), jpg)
	f.Add(uint16(404), "", []byte(`{"message":"Authentication is disabled"}`), uint16(200), jpg)
	f.Add(uint16(302), "", []byte{}, uint16(302), []byte{})
	f.Fuzz(func(t *testing.T, loginStatus uint16, setCookie string, loginBody []byte, snapStatus uint16, snap []byte) {
		a := &answers{loginStatus: int(loginStatus), setCookie: setCookie, loginBody: loginBody, snapStatus: int(snapStatus), snapBody: snap}
		const maxPixels = 1 << 16
		var kept []Try
		l, err := New(Config{Frigate: "http://frigate.test:5000", Classify: redness{}, User: "u", Password: "p",
			HTTP: &http.Client{Transport: a}, Retries: -1, Timeout: time.Second, MaxPixels: maxPixels, Rule: oneTry,
			Keep: func(t Try) { kept = append(kept, t) }})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if err := l.Login(ctx); err != nil {
			if !errors.Is(err, ErrLogin) {
				t.Fatalf("login refused with %v, want ErrLogin", err)
			}
			return
		}
		want := ""
		for _, c := range (&http.Response{Header: http.Header{"Set-Cookie": {setCookie}}}).Cookies() {
			if c.Name == "frigate_token" {
				want = c.Value
			}
		}
		if l.token == "" || l.token != want {
			t.Fatalf("token %q from Set-Cookie %q, want %q", l.token, setCookie, want)
		}
		l.Handle(msg("new", "a", "front", "bird", [4]int{0, 0, 100, 100}, 1, true))
		if len(l.queue) != 1 {
			t.Fatalf("%d snapshots queued", len(l.queue))
		}
		err = l.try(ctx, l.queue[0])
		if len(a.auth) == 0 || a.auth[0] != "Bearer "+want {
			t.Fatalf("snapshot requests with Authorization %q, want Bearer %q", a.auth, want)
		}
		st := int(snapStatus)
		var se *StatusError
		switch {
		case st == http.StatusNotFound:
			if err != nil || l.Stats().Skipped[SkipGone] != 1 {
				t.Fatalf("404: %v, skipped %v", err, l.Stats().Skipped)
			}
		case st/100 != 2:
			if !errors.As(err, &se) || se.Code != st {
				t.Fatalf("status %d: %v, want a *StatusError of that code", st, err)
			}
		case err != nil:
			if len(kept) != 0 || !strings.Contains(err.Error(), "snapshot of a") {
				t.Fatalf("a refused snapshot: %v (kept %d)", err, len(kept))
			}
		default:
			if len(kept) != 1 || !bytes.Equal(kept[0].JPEG, snap) || kept[0].Image.W*kept[0].Image.H > maxPixels {
				t.Fatalf("kept %d tries", len(kept))
			}
		}
		for _, p := range a.posts {
			var body struct {
				SubLabel      string   `json:"subLabel"`
				SubLabelScore *float64 `json:"subLabelScore"`
			}
			if err := json.Unmarshal(p, &body); err != nil || utf8.RuneCountInString(body.SubLabel) > MaxSubLabel ||
				body.SubLabel == "" || body.SubLabelScore == nil || !(*body.SubLabelScore > 0 && *body.SubLabelScore <= 1) {
				t.Fatalf("posted %s", p)
			}
		}
	})
}
