package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/color"
	"image/jpeg"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/app/inbox"
)

// inboxServer is testServer with an inbox in t.TempDir().
func inboxServer(t testing.TB, opt inbox.Options, edit func(*Config)) (*Server, string, *inbox.Inbox) {
	t.Helper()
	ib, err := inbox.Open(filepath.Join(t.TempDir(), "inbox"), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ib.Close() }) // after the server's cleanup (LIFO): the server stores what it holds first
	s, hs, _ := testServer(t, func(c *Config) {
		c.Inbox = ib
		if edit != nil {
			edit(c)
		}
	})
	return s, hs.URL, ib
}

// teach3 teaches alpha, beta and gamma (clusters around unit vectors
// 0, 1 and 2 scaled by 4).
func teach3(t testing.TB, url, token string) {
	t.Helper()
	x, y := clusters(rand.New(rand.NewPCG(1, 2)), []int{0, 1, 2}, 60)
	learnFeatures(t, url, token, x, y)
}

// doubtful returns feature vectors between the three classes' centres
// (the model cannot be sure of them) and clear ones at a centre.
func doubtful(n int, seed uint64) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 9))
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, testDim)
		for j := range 3 {
			v[j] = 4.0/3 + float32(r.NormFloat64()*0.05)
		}
		out[i] = v
	}
	return out
}

func centre(c int) []float32 {
	v := make([]float32, testDim)
	v[c] = 4
	return v
}

// predictFeatures predicts x with all classes' scores.
func predictFeatures(t testing.TB, url string, x [][]float32) PredictResponse {
	t.Helper()
	var pr PredictResponse
	code, _, b := do(t, "POST", url+"/v1/predict", "application/json", jsonBody(t, Request{Features: x, Top: 10}), "", &pr)
	if code != http.StatusOK {
		t.Fatalf("predict: %d %s", code, b)
	}
	return pr
}

// keptBy returns the predictions the policy keeps, by the response's own
// fields (the policy applied to what the client saw).
func keptBy(p inbox.Policy, pr PredictResponse) []int {
	var out []int
	for i, q := range pr.Predictions {
		row := make([]float32, len(q.Top))
		for j, s := range q.Top {
			row[j] = s.Score
		}
		prob := 0.0
		if q.Probability != nil {
			prob = *q.Probability
		}
		if _, ok := p.Keep(q.Unknown, prob, q.Probability != nil, row); ok {
			out = append(out, i)
		}
	}
	return out
}

func listInbox(t *testing.T, url, token string) InboxResponse {
	t.Helper()
	var ir InboxResponse
	code, _, b := do(t, "GET", url+"/v1/inbox", "", nil, token, &ir)
	if code != http.StatusOK {
		t.Fatalf("GET /v1/inbox: %d %s", code, b)
	}
	return ir
}

// TestInboxKeepsDoubtful: exactly the predictions the policy keeps
// (doubtful ones, not clear ones) land in the inbox, with the guess and
// scores the client was answered, and their features; images are kept
// downscaled.
func TestInboxKeepsDoubtful(t *testing.T) {
	s, url, ib := inboxServer(t, inbox.Options{}, nil)
	teach3(t, url, "")
	x := append(doubtful(3, 1), centre(0), centre(1), centre(2))
	pr := predictFeatures(t, url, x)
	want := keptBy(inbox.Policy{}, pr)
	if !slices.Equal(want, []int{0, 1, 2}) {
		t.Fatalf("the policy keeps predictions %v of %+v, want the three doubtful ones (the test's premise)", want, pr.Predictions)
	}
	s.flushInbox()
	ir := listInbox(t, url, "")
	if ir.Count != 3 || len(ir.Items) != 3 {
		t.Fatalf("inbox: %+v, want 3 items", ir)
	}
	for k, it := range ir.Items {
		i := want[len(want)-1-k] // newest first
		p := pr.Predictions[i]
		if it.Guess != p.Class || it.Unknown != p.Unknown || len(it.Top) != len(p.Top) || it.Top[0].Score != p.Top[0].Score || it.ModelVersion != pr.Version {
			t.Fatalf("item %d: %+v, prediction %+v", k, it, p)
		}
		if it.Image || it.ImageURL != "" {
			t.Fatalf("a feature vector kept with an image: %+v", it)
		}
		f, err := ib.Features(it.ID)
		if err != nil || !slices.Equal(f, x[i]) {
			t.Fatalf("item %d features %v (%v), sent %v", k, f, err, x[i])
		}
	}

	// images: a 640×480 picture between the classes is kept, as a JPEG
	// of 256×192
	img := pngOf(t, 640, 480, color.RGBA{128, 128, 128, 255}, 3)
	ct, body := multipartBody(t, [][]byte{img}, map[string]string{"top": "3"})
	var ipr PredictResponse
	if code, _, b := do(t, "POST", url+"/v1/predict", ct, body, "", &ipr); code != http.StatusOK {
		t.Fatalf("predict image: %d %s", code, b)
	}
	s.flushInbox()
	ir = listInbox(t, url, "")
	kept := len(keptBy(inbox.Policy{}, ipr)) == 1
	if !kept {
		t.Fatalf("the grey picture, between the classes, was not doubtful to the model: %+v", ipr.Predictions[0])
	}
	top := ir.Items[0]
	if !top.Image || top.ImageURL != "/v1/inbox/"+top.ID+"/image" || top.Width != 256 || top.Height != 192 {
		t.Fatalf("image item %+v", top)
	}
	code, h, b := do(t, "GET", url+top.ImageURL, "", nil, "", nil)
	if code != http.StatusOK || h.Get("Content-Type") != "image/jpeg" {
		t.Fatalf("GET image: %d %s", code, h.Get("Content-Type"))
	}
	if cfg, err := jpeg.DecodeConfig(bytes.NewReader(b)); err != nil || cfg.Width != 256 || cfg.Height != 192 {
		t.Fatalf("image: %v %+v", err, cfg)
	}
	for _, bad := range []string{"/v1/inbox/" + ir.Items[1].ID + "/image", "/v1/inbox/..%2f..%2fm.flycl/image", "/v1/inbox/123/image"} {
		if code, _, _ := do(t, "GET", url+bad, "", nil, "", nil); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", bad, code)
		}
	}
}

// TestInboxLearn: learning inbox items is one learn through the learner
// queue, equal to learning the same features with /v1/learn (the same
// scores, to the bit), and removes the items only once it succeeded.
func TestInboxLearn(t *testing.T) {
	var failing atomic.Bool
	s, url, ib := inboxServer(t, inbox.Options{}, func(c *Config) {
		c.Backend = &failingBackend{Backend: c.Backend, fail: &failing}
	})
	_, refURL, _ := inboxServer(t, inbox.Options{}, nil) // the reference: learns by /v1/learn
	teach3(t, url, "")
	teach3(t, refURL, "")
	x := doubtful(4, 2)
	predictFeatures(t, url, x)
	s.flushInbox()
	ir := listInbox(t, url, "")
	if ir.Count != 4 {
		t.Fatalf("%d items, want 4", ir.Count)
	}
	pick := []string{ir.Items[3].ID, ir.Items[1].ID} // x[0] and x[2]
	body := jsonBody(t, InboxRequest{IDs: pick, Label: "omega"})

	// a failed learn leaves the items in the inbox
	failing.Store(true)
	code, _, b := do(t, "POST", url+"/v1/inbox/learn", "application/json", body, "", nil)
	if code != http.StatusInternalServerError || !strings.Contains(string(b), "injected") {
		t.Fatalf("learn with a failing backend: %d %s", code, b)
	}
	if n, _ := ib.Len(); n != 4 {
		t.Fatalf("a failed learn removed items: %d left", n)
	}
	failing.Store(false)
	var lr InboxLearnResponse
	if code, _, b := do(t, "POST", url+"/v1/inbox/learn", "application/json", body, "", &lr); code != http.StatusOK {
		t.Fatalf("learn: %d %s", code, b)
	}
	if !slices.Equal(lr.Removed, pick) || lr.Samples != 2 || !slices.Equal(lr.NewClasses, []string{"omega"}) || lr.Classes != 4 {
		t.Fatalf("learn response %+v", lr)
	}
	left := listInbox(t, url, "")
	if got := []string{left.Items[0].ID, left.Items[1].ID}; left.Count != 2 || !slices.Equal(got, []string{ir.Items[0].ID, ir.Items[2].ID}) {
		t.Fatalf("left in the inbox: %+v", left)
	}
	// the reference learns x[0] and x[2] as omega directly
	var ref LearnResponse
	if code, _, b := do(t, "POST", refURL+"/v1/learn", "application/json", jsonBody(t, Request{Features: [][]float32{x[0], x[2]}, Label: "omega"}), "", &ref); code != http.StatusOK {
		t.Fatalf("reference learn: %d %s", code, b)
	}
	// the learned model's ranking, read from its view: a POST /v1/predict
	// would keep its doubtful probes in the inbox, whose counts follow
	probe := append(doubtful(5, 3), x...)
	var flat []float32
	for _, v := range probe {
		flat = append(flat, v...)
	}
	sc, err := s.View().Scores(context.Background(), flat)
	if err != nil {
		t.Fatal(err)
	}
	got, want := s.View().Rank(sc, 10), predictFeatures(t, refURL, probe)
	for i := range probe {
		if g, w := got[i], want.Predictions[i].Top; !slices.Equal(g, w) {
			t.Fatalf("probe %d: after the inbox learn %+v, after the same learn by /v1/learn %+v", i, g, w)
		}
	}
	if got[len(probe)-4][0].Class != "omega" {
		t.Fatalf("a learned item is predicted %q, want omega", got[len(probe)-4][0].Class)
	}

	// a learned ID is gone; a bad request changes nothing
	for _, tc := range []struct {
		body string
		code int
	}{
		{`{"ids":["` + pick[0] + `"],"label":"omega"}`, http.StatusNotFound},
		{`{"ids":["` + left.Items[0].ID + `"]}`, http.StatusBadRequest},
		{`{"ids":[],"label":"x"}`, http.StatusBadRequest},
		{`{"ids":["` + left.Items[0].ID + `","` + left.Items[0].ID + `"],"label":"x"}`, http.StatusBadRequest},
		{`{"ids":["` + left.Items[0].ID + `"],"label":"x","lambda":3}`, http.StatusBadRequest},
		{`{"ids":["../m.flycl"],"label":"x"}`, http.StatusNotFound},
		{`{"ids":["` + left.Items[0].ID + `"],"label":"a\u0000b"}`, http.StatusBadRequest},
		// a number naming another class's label (found by FuzzInboxRequest)
		{`{"ids":["` + left.Items[0].ID + `"],"label":"0"}`, http.StatusBadRequest},
	} {
		code, _, b := do(t, "POST", url+"/v1/inbox/learn", "application/json", []byte(tc.body), "", nil)
		if code != tc.code {
			t.Errorf("%s: %d %s, want %d", tc.body, code, b, tc.code)
		}
	}
	if n, _ := ib.Len(); n != 2 || s.View().Version() != 2 {
		t.Fatalf("refused requests changed something: %d items, version %d", n, s.View().Version())
	}

	// discard
	var dr InboxDiscardResponse
	body = jsonBody(t, InboxRequest{IDs: []string{left.Items[0].ID, pick[0]}})
	if code, _, b := do(t, "POST", url+"/v1/inbox/discard", "application/json", body, "", &dr); code != http.StatusOK || !slices.Equal(dr.Removed, []string{left.Items[0].ID}) {
		t.Fatalf("discard: %d %s", code, b)
	}
	if n, _ := ib.Len(); n != 1 || s.View().Version() != 2 {
		t.Fatalf("after a discard: %d items, version %d", n, s.View().Version())
	}
	metrics := scrape(t, url)
	lines := []string{"flycl_inbox_items 1", `flycl_inbox_removed_total{reason="learned"} 2`, `flycl_inbox_removed_total{reason="discarded"} 1`}
	why := map[inbox.Reason]int{}
	for _, it := range ir.Items {
		why[it.Why]++
	}
	for r, n := range why {
		lines = append(lines, fmt.Sprintf("flycl_inbox_kept_total{why=%q} %d", r, n))
	}
	for _, line := range lines {
		if !strings.Contains(metrics, line+"\n") {
			t.Errorf("metrics lack %q", line)
		}
	}
}

// failingBackend fails learns while fail is set.
type failingBackend struct {
	Backend
	fail *atomic.Bool
}

func (b *failingBackend) Learn(ctx context.Context, x []float32, labels []string, opt deploy.LearnOptions) (LearnReport, ModelView, error) {
	if b.fail.Load() {
		return LearnReport{}, nil, errors.New("injected failure")
	}
	return b.Backend.Learn(ctx, x, labels, opt)
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestInboxBoundsServed: a server's inbox keeps the newest MaxItems and
// counts the dropped ones; a restarted server lists the same items.
func TestInboxBoundsServed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "inbox")
	ib, err := inbox.Open(dir, inbox.Options{MaxItems: 3})
	if err != nil {
		t.Fatal(err)
	}
	s, hs, path := testServer(t, func(c *Config) { c.Inbox = ib })
	teach3(t, hs.URL, "")
	x := doubtful(5, 4)
	for i := range x { // one request each: the order they are kept in
		predictFeatures(t, hs.URL, x[i:i+1])
	}
	s.flushInbox()
	before := listInbox(t, hs.URL, "")
	if before.Count != 3 {
		t.Fatalf("%d items, want 3", before.Count)
	}
	for k, it := range before.Items {
		if f, _ := ib.Features(it.ID); !slices.Equal(f, x[4-k]) {
			t.Fatalf("item %d holds %v, want the newest predictions (x[%d])", k, f, 4-k)
		}
	}
	m := scrape(t, hs.URL)
	if !strings.Contains(m, `flycl_inbox_dropped_total{reason="full"} 2`+"\n") || !strings.Contains(m, "flycl_inbox_items 3\n") {
		t.Fatalf("metrics: %s", grepLines(m, "flycl_inbox"))
	}
	hs.Close()
	s.Close()
	ib.Close()

	ib2, err := inbox.Open(dir, inbox.Options{MaxItems: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer ib2.Close()
	s2, err := New(Config{Backend: newFileBackend(t, path), Extractor: gridExtractor{}, Inbox: ib2})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	hs2 := httptestServer(t, s2)
	after := listInbox(t, hs2, "")
	if !reflect.DeepEqual(after.Items, before.Items) {
		t.Fatalf("after a restart:\n%+v\nbefore:\n%+v", after.Items, before.Items)
	}
	if !strings.Contains(scrape(t, hs2), "flycl_inbox_items 3\n") {
		t.Fatalf("a restarted server's gauge does not count the items found")
	}
}

// httptestServer serves s on 127.0.0.1 until the test ends.
func httptestServer(t *testing.T, s *Server) string {
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return hs.URL
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestInboxGuarded: the inbox endpoints need the token, reading too;
// a browser's learn from another site is refused; a server without an
// inbox answers 404.
func TestInboxGuarded(t *testing.T) {
	const tok = "s3cret"
	s, url, _ := inboxServer(t, inbox.Options{}, func(c *Config) { c.Token = tok })
	teach3(t, url, tok)
	predictFeatures(t, url, doubtful(1, 5))
	s.flushInbox()
	ir := listInbox(t, url, tok)
	if ir.Count != 1 {
		t.Fatalf("%d items", ir.Count)
	}
	body := jsonBody(t, InboxRequest{IDs: []string{ir.Items[0].ID}, Label: "x"})
	for _, tc := range []struct{ method, path string }{{"GET", "/v1/inbox"}, {"GET", "/v1/inbox/" + ir.Items[0].ID + "/image"},
		{"POST", "/v1/inbox/learn"}, {"POST", "/v1/inbox/discard"}} {
		if code, _, _ := do(t, tc.method, url+tc.path, "application/json", body, "", nil); code != http.StatusUnauthorized {
			t.Errorf("%s %s without the token: %d, want 401", tc.method, tc.path, code)
		}
	}
	for _, path := range []string{"/v1/inbox/learn", "/v1/inbox/discard"} {
		req, _ := http.NewRequest("POST", url+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Origin", "https://evil.example")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("cross-site POST %s: %d, want 403", path, resp.StatusCode)
		}
	}
	if n := listInbox(t, url, tok).Count; n != 1 || s.View().Version() != 1 {
		t.Fatalf("refused requests changed something: %d items, version %d", n, s.View().Version())
	}

	_, plain, _ := testServer(t, nil)
	for _, path := range []string{"/v1/inbox", "/v1/inbox/00000000000000000001/image"} {
		if code, _, b := do(t, "GET", plain.URL+path, "", nil, "", nil); code != http.StatusNotFound || !strings.Contains(string(b), "--inbox") {
			t.Errorf("GET %s without an inbox: %d %s", path, code, b)
		}
	}
}

// FuzzInboxRequest sends arbitrary bodies to the inbox's learn and
// discard: every answer is 200 or a 4xx JSON error, never a 5xx or a
// panic, and the inbox and model stay consistent (an item is gone only
// after a 200).
func FuzzInboxRequest(f *testing.F) {
	f.Add([]byte(`{"ids":["ID0"],"label":"omega"}`), true)
	f.Add([]byte(`{"ids":["ID0","ID1"]}`), false)
	f.Add([]byte(`{"ids":["ID1","ID1"],"label":"x"}`), true)
	f.Add([]byte(`{"ids":[],"label":"x"}`), true)
	f.Add([]byte(`{"ids":["ID0"],"label":"\u0000"}`), true)
	f.Add([]byte(`{"ids":"ID0"}`), false)
	f.Add([]byte(`{"ids":["../../m.flycl"],"label":"x"}`), true)
	f.Add([]byte(`{"ids":["ID0"],"label":"x"} {}`), true)
	f.Add([]byte(`[`), false)
	_, url, ib := inboxServer(f, inbox.Options{MaxItems: 20}, nil)
	teach3(f, url, "")
	f.Fuzz(func(t *testing.T, body []byte, learn bool) {
		for i := 0; ib.List() == nil || len(ib.List()) < 2; i++ { // items straight into the inbox
			if _, _, err := ib.Add(inbox.Entry{Guess: "alpha", Why: inbox.Unknown, Features: doubtful(1, uint64(i))[0]}); err != nil {
				t.Fatal(err)
			}
		}
		items := ib.List()
		for i, it := range items[:2] {
			body = bytes.ReplaceAll(body, []byte(fmt.Sprintf("ID%d", i)), []byte(it.ID))
		}
		path := "/v1/inbox/discard"
		if learn {
			path = "/v1/inbox/learn"
		}
		code, _, b := do(t, "POST", url+path, "application/json", body, "", nil)
		if code >= 500 || (code != http.StatusOK && !strings.Contains(string(b), `"error"`)) {
			t.Fatalf("POST %s %q: %d %s", path, body, code, b)
		}
		if n, _ := ib.Len(); code != http.StatusOK && n != len(items) {
			t.Fatalf("a refused request (%d) removed items: %d of %d left", code, n, len(items))
		}
	})
}
