package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
)

// TestLearnPredictRestart teaches two tasks of well-separated clusters
// (the truth is the cluster a sample was drawn from), checks held-out
// predictions, then opens the saved file in a new server and checks it
// gives bit-identical scores.
func TestLearnPredictRestart(t *testing.T) {
	s1, hs, path := testServer(t, nil)
	r := rand.New(rand.NewPCG(1, 2))
	x, y := clusters(r, []int{0, 1, 2}, 60)
	lr := learnFeatures(t, hs.URL, "", x, y)
	if lr.Version != 1 || lr.Classes != 3 || strings.Join(lr.NewClasses, ",") != "alpha,beta,gamma" {
		t.Fatalf("first learn: %+v", lr)
	}
	x, y = clusters(r, []int{3, 1}, 40) // a new class and more of a known one
	lr = learnFeatures(t, hs.URL, "", x, y)
	if lr.Version != 2 || lr.Classes != 4 || strings.Join(lr.NewClasses, ",") != "delta" {
		t.Fatalf("second learn: %+v", lr)
	}
	var cr ClassesResponse
	do(t, "GET", hs.URL+"/v1/classes", "", nil, "", &cr)
	var names []string
	for _, c := range cr.Classes {
		names = append(names, c.Name)
	}
	if cr.Version != 2 || strings.Join(names, ",") != "alpha,beta,gamma,delta" {
		t.Fatalf("classes: %+v", cr)
	}

	tx, ty := clusters(r, []int{0, 1, 2, 3}, 80)
	var pr PredictResponse
	code, _, b := do(t, "POST", hs.URL+"/v1/predict", "application/json", jsonBody(t, Request{Features: tx, Top: 2}), "", &pr)
	if code != http.StatusOK {
		t.Fatalf("predict: %d %s", code, b)
	}
	hit := 0
	for i, p := range pr.Predictions {
		if len(p.Top) != 2 || p.Top[0].Score < p.Top[1].Score || p.Class != p.Top[0].Class {
			t.Fatalf("prediction %d: %+v", i, p)
		}
		if p.Class == className(ty[i]) {
			hit++
		}
	}
	// Centres 4 apart with noise 0.3: the nearest centre is always right,
	// and so should a ridge classifier on the expanded codes be.
	if hit < len(ty)*95/100 {
		t.Fatalf("accuracy %d/%d on separated clusters", hit, len(ty))
	}

	// Restart: a new server on the same file predicts exactly the same
	// (the first one stops first: a model file has one writer).
	s1.Close()
	s2, err := New(Config{Backend: newFileBackend(t, path)})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.View().Version() != 2 {
		t.Fatalf("reloaded version %d, want 2", s2.View().Version())
	}
	flat := make([]float32, 0, len(tx)*testDim)
	for _, v := range tx {
		flat = append(flat, v...)
	}
	sc, err := s2.View().Scores(context.Background(), flat)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pr.Predictions {
		for _, s := range p.Top {
			j := indexOf(cr.Classes, s.Class)
			if math.Float32bits(sc[i*4+j]) != math.Float32bits(s.Score) {
				t.Fatalf("sample %d class %s: %v after restart, %v before", i, s.Class, sc[i*4+j], s.Score)
			}
		}
	}
}

func indexOf(cs []Class, name string) int {
	for i, c := range cs {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// TestImages teaches colours from PNG uploads (multipart, one label for
// several images) and from base64 JSON, and classifies new images.
func TestImages(t *testing.T) {
	_, hs, _ := testServer(t, nil)
	red, green, blue := color.RGBA{200, 30, 30, 255}, color.RGBA{30, 200, 30, 255}, color.RGBA{30, 30, 200, 255}
	ct, body := multipartBody(t, [][]byte{pngOf(t, 20, 16, red, 1), pngOf(t, 16, 20, red, 2)}, map[string]string{"label": "red"})
	var lr LearnResponse
	if code, _, b := do(t, "POST", hs.URL+"/v1/learn", ct, body, "", &lr); code != 200 || lr.Samples != 2 {
		t.Fatalf("learn red: %d %s", code, b)
	}
	if _, ok := lr.Stages["extract"]; !ok {
		t.Fatalf("learn stages lack extract: %v", lr.Stages)
	}
	req := Request{Images: []string{base64.StdEncoding.EncodeToString(pngOf(t, 16, 16, green, 3)),
		base64.StdEncoding.EncodeToString(pngOf(t, 16, 16, blue, 4))}, Labels: []string{"green", "blue"}}
	if code, _, b := do(t, "POST", hs.URL+"/v1/learn", "application/json", jsonBody(t, req), "", &lr); code != 200 {
		t.Fatalf("learn green+blue: %d %s", code, b)
	}
	ct, body = multipartBody(t, [][]byte{pngOf(t, 24, 24, blue, 5), pngOf(t, 24, 24, red, 6), pngOf(t, 24, 24, green, 7)}, map[string]string{"top": "3"})
	var pr PredictResponse
	if code, _, b := do(t, "POST", hs.URL+"/v1/predict", ct, body, "", &pr); code != 200 {
		t.Fatalf("predict: %d %s", code, b)
	}
	var got []string
	for _, p := range pr.Predictions {
		got = append(got, p.Class)
		if len(p.Top) != 3 {
			t.Fatalf("top-3 has %d entries", len(p.Top))
		}
	}
	if strings.Join(got, ",") != "blue,red,green" {
		t.Fatalf("predicted %v, want blue, red, green", got)
	}
}

// badRequest is a request the server must refuse with status want and
// an error containing contains.
type badRequest struct {
	name, method, path, ctype string
	body                      []byte
	token                     string
	want                      int
	contains                  string
}

// badTestToken is the bearer token of the server badRequests is for.
const badTestToken = "s3cret-token"

// badRequests are the refused requests of TestBadRequests (also the seeds
// of FuzzReadInput), for a server with token badTestToken, MaxBodyBytes
// 64 KiB, MaxPixels 1000, MaxImages 3 and classes alpha and beta.
func badRequests(t testing.TB) []badRequest {
	const token = badTestToken
	okPNG := pngOf(t, 16, 16, color.RGBA{9, 9, 9, 255}, 1)
	bigPNG := pngOf(t, 40, 40, color.RGBA{9, 9, 9, 255}, 1) // 1600 pixels > 1000
	corrupt := append([]byte{0xff, 0xd8, 0xff, 0xe0}, []byte("not really a jpeg at all")...)
	truncated := okPNG[:len(okPNG)/2]
	feat := func(n int) [][]float32 { return [][]float32{make([]float32, n)} }
	mp := func(images [][]byte, f map[string]string) (string, []byte) { return multipartBody(t, images, f) }
	ctPix, bodyPix := mp([][]byte{bigPNG}, nil)
	ctBad, bodyBad := mp([][]byte{corrupt}, nil)
	ctTrunc, bodyTrunc := mp([][]byte{truncated}, nil)
	ctMany, bodyMany := mp([][]byte{okPNG, okPNG, okPNG, okPNG}, nil)
	ctField, bodyField := mp([][]byte{okPNG}, map[string]string{"colour": "red"})
	ctNoLabel, bodyNoLabel := mp([][]byte{okPNG, okPNG}, nil)
	ctEmptyLabel, bodyEmptyLabel := mp([][]byte{okPNG, okPNG}, map[string]string{"label": ""})
	huge := jsonBody(t, Request{Features: [][]float32{make([]float32, 50000)}})
	ctLambda, bodyLambda := mp([][]byte{okPNG}, map[string]string{"label": "a", "lambda": "ten"})
	ctOnline, bodyOnline := mp([][]byte{okPNG}, map[string]string{"label": "a", "online": "maybe"})
	ctBatch, bodyBatch := mp([][]byte{okPNG}, map[string]string{"label": "a", "online": "true", "batch": "1.5"})
	learnReq := func(lambda float64, online bool, batch int) []byte {
		return jsonBody(t, Request{Features: feat(testDim), Label: "a", Lambda: lambda, Online: online, Batch: batch})
	}

	return []badRequest{
		{"malformed JSON", "POST", "/v1/predict", "application/json", []byte(`{"features": [[1,2`), "", 400, "malformed JSON"},
		{"two JSON values", "POST", "/v1/predict", "application/json", []byte(`{} {}`), "", 400, "more than one"},
		{"unknown JSON field", "POST", "/v1/predict", "application/json", []byte(`{"feature": [[1]]}`), "", 400, "unknown field"},
		{"wrong content type", "POST", "/v1/predict", "text/plain", []byte("hello"), "", 415, "Content-Type"},
		{"no content type", "POST", "/v1/predict", "", []byte("{}"), "", 415, "Content-Type"},
		{"multipart without boundary", "POST", "/v1/predict", "multipart/form-data", []byte("x"), "", 400, "boundary"},
		{"oversize body", "POST", "/v1/predict", "application/json", huge, "", 413, "limit"},
		{"corrupt image", "POST", "/v1/predict", ctBad, bodyBad, "", 400, "image 0"},
		{"truncated image", "POST", "/v1/predict", ctTrunc, bodyTrunc, "", 400, "image 0"},
		{"too many pixels", "POST", "/v1/predict", ctPix, bodyPix, "", 413, "pixels"},
		{"too many images", "POST", "/v1/predict", ctMany, bodyMany, "", 413, "images"},
		{"unknown multipart field", "POST", "/v1/predict", ctField, bodyField, "", 400, "colour"},
		{"not base64", "POST", "/v1/predict", "application/json", []byte(`{"images": ["%%%"]}`), "", 400, "base64"},
		{"no input", "POST", "/v1/predict", "application/json", []byte(`{}`), "", 400, "no input"},
		{"images and features", "POST", "/v1/predict", "application/json", jsonBody(t, Request{Images: []string{base64.StdEncoding.EncodeToString(okPNG)}, Features: feat(testDim)}), "", 400, "not both"},
		{"wrong feature length", "POST", "/v1/predict", "application/json", jsonBody(t, Request{Features: feat(testDim + 1)}), "", 400, "d=12"},
		{"top too large", "POST", "/v1/predict", "application/json", jsonBody(t, Request{Features: feat(testDim), Top: 1000}), "", 400, "top"},
		{"negative top", "POST", "/v1/predict", "application/json", jsonBody(t, Request{Features: feat(testDim), Top: -1}), "", 400, "top"},
		{"labels on predict", "POST", "/v1/predict", "application/json", jsonBody(t, Request{Features: feat(testDim), Labels: []string{"a"}}), "", 400, "labels"},
		{"learn without token", "POST", "/v1/learn", "application/json", jsonBody(t, Request{Features: feat(testDim), Label: "a"}), "", 401, "token"},
		{"learn with wrong token", "POST", "/v1/learn", "application/json", jsonBody(t, Request{Features: feat(testDim), Label: "a"}), "nope", 403, "wrong token"},
		{"learn without labels", "POST", "/v1/learn", "application/json", jsonBody(t, Request{Features: feat(testDim)}), token, 400, "labels"},
		{"learn with too few labels", "POST", "/v1/learn", ctNoLabel, bodyNoLabel, token, 400, "label is empty or missing"},
		{"learn JSON empty label", "POST", "/v1/learn", "application/json", []byte(`{"features": [[0,0,0,0,0,0,0,0,0,0,0,1],[0,0,0,0,0,0,0,0,0,0,1,0],[0,0,0,0,0,0,0,0,0,1,0,0]], "label": ""}`), token, 400, "label is empty or missing"},
		{"learn multipart empty label", "POST", "/v1/learn", ctEmptyLabel, bodyEmptyLabel, token, 400, "is empty"},
		{"learn label with trailing space", "POST", "/v1/learn", "application/json", jsonBody(t, Request{Features: feat(testDim), Label: "alpha "}), token, 400, "ends with white space"},
		{"learn all-space label", "POST", "/v1/learn", "application/json", jsonBody(t, Request{Features: feat(testDim), Label: "   "}), token, 400, "starts with white space"},
		{"learn zero-width space label", "POST", "/v1/learn", "application/json", jsonBody(t, Request{Features: feat(testDim), Label: "alpha\u200b"}), token, 400, "U+200B"},
		{"learn right-to-left override label", "POST", "/v1/learn", "application/json", jsonBody(t, Request{Features: feat(testDim), Label: "\u202eahpla"}), token, 400, "U+202E"},
		{"learn empty label", "POST", "/v1/learn", "application/json", jsonBody(t, Request{Features: feat(testDim), Labels: []string{""}}), token, 400, "label"},
		{"learn C1 control label", "POST", "/v1/learn", "application/json", jsonBody(t, Request{Features: feat(testDim), Labels: []string{"a\u0085b"}}), token, 400, "control character"},
		{"learn control char label", "POST", "/v1/learn", "application/json", jsonBody(t, Request{Features: feat(testDim), Labels: []string{"a\nb"}}), token, 400, "label"},
		{"learn label and labels", "POST", "/v1/learn", "application/json", jsonBody(t, Request{Features: feat(testDim), Labels: []string{"a"}, Label: "b"}), token, 400, "not both"},
		{"learn wrong feature length", "POST", "/v1/learn", "application/json", jsonBody(t, Request{Features: feat(3), Label: "a"}), token, 400, "d=12"},
		{"learn negative lambda", "POST", "/v1/learn", "application/json", learnReq(-1, false, 0), token, 400, "lambda"},
		{"learn lambda not a number", "POST", "/v1/learn", "application/json", []byte(`{"features": [[0,0,0,0,0,0,0,0,0,0,0,0]], "label": "a", "lambda": "1e6"}`), token, 400, "lambda"},
		{"learn lambda overflows", "POST", "/v1/learn", "application/json", []byte(`{"features": [[0,0,0,0,0,0,0,0,0,0,0,0]], "label": "a", "lambda": 1e999}`), token, 400, "malformed JSON"},
		{"learn batch without online", "POST", "/v1/learn", "application/json", learnReq(0, false, 10), token, 400, "online"},
		{"learn negative batch", "POST", "/v1/learn", "application/json", learnReq(0, true, -5), token, 400, "batch"},
		{"learn online not a bool", "POST", "/v1/learn", "application/json", []byte(`{"features": [[0,0,0,0,0,0,0,0,0,0,0,0]], "label": "a", "online": 1}`), token, 400, "online"},
		{"learn multipart lambda not a number", "POST", "/v1/learn", ctLambda, bodyLambda, token, 400, "lambda"},
		{"learn multipart online not a bool", "POST", "/v1/learn", ctOnline, bodyOnline, token, 400, "online"},
		{"learn multipart batch not an integer", "POST", "/v1/learn", ctBatch, bodyBatch, token, 400, "batch"},
		{"learn with top", "POST", "/v1/learn", "application/json", jsonBody(t, Request{Features: feat(testDim), Label: "a", Top: 3}), token, 400, "top"},
		{"predict with lambda", "POST", "/v1/predict", "application/json", jsonBody(t, Request{Features: feat(testDim), Lambda: 10}), "", 400, "lambda"},
		{"predict online", "POST", "/v1/predict", "application/json", jsonBody(t, Request{Features: feat(testDim), Online: true}), "", 400, "online"},
		{"forget with lambda", "DELETE", "/v1/classes/alpha", "application/json", jsonBody(t, Request{Features: feat(testDim), Lambda: 10}), token, 400, "lambda"},
		{"forget unknown class", "DELETE", "/v1/classes/nosuch", "", nil, token, 404, "unknown class"},
		{"forget without token", "DELETE", "/v1/classes/alpha", "", nil, "", 401, "token"},
		{"wrong method", "GET", "/v1/predict", "", nil, "", 405, "not allowed"},
		{"wrong method on learn", "PUT", "/v1/learn", "", nil, token, 405, "not allowed"},
		{"unknown endpoint", "GET", "/v1/nosuch", "", nil, "", 404, "no such endpoint"},
		{"unknown page", "GET", "/nosuch.js", "", nil, "", 404, "no such page"},
	}
}

// TestBadRequests sends every kind of bad request and checks each gets
// its 4xx status with a JSON error, and that the server keeps serving.
func TestBadRequests(t *testing.T) {
	const token = badTestToken
	_, hs, _ := testServer(t, func(c *Config) { c.Token = token; c.MaxBodyBytes = 64 << 10; c.MaxPixels = 1000; c.MaxImages = 3 })
	r := rand.New(rand.NewPCG(5, 6))
	x, y := clusters(r, []int{0, 1}, 20)
	learnFeatures(t, hs.URL, token, x, y)

	tests := badRequests(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, h, b := do(t, tc.method, hs.URL+tc.path, tc.ctype, tc.body, tc.token, nil)
			if code != tc.want {
				t.Fatalf("status %d, want %d: %s", code, tc.want, b)
			}
			var e ErrorBody
			if err := json.Unmarshal(b, &e); err != nil || e.Status != code || !strings.Contains(e.Error, tc.contains) {
				t.Fatalf("error body %q (%v), want JSON with %q", b, err, tc.contains)
			}
			if ct := h.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q", ct)
			}
			// Still serving, and the model is unchanged.
			var hz map[string]any
			if c, _, b := do(t, "GET", hs.URL+"/v1/healthz", "", nil, "", &hz); c != 200 || hz["version"] != 1.0 {
				t.Fatalf("healthz after bad request: %d %s", c, b)
			}
		})
	}
}

func TestPredictBeforeLearning(t *testing.T) {
	_, hs, _ := testServer(t, nil)
	code, _, b := do(t, "POST", hs.URL+"/v1/predict", "application/json", jsonBody(t, Request{Features: [][]float32{make([]float32, testDim)}}), "", nil)
	if code != http.StatusConflict || !strings.Contains(string(b), "not learned") {
		t.Fatalf("predict on an empty model: %d %s", code, b)
	}
}

func TestAuthForAll(t *testing.T) {
	const token = "another-token"
	_, hs, _ := testServer(t, func(c *Config) { c.Token = token; c.TokenForAll = true })
	for _, tc := range []struct {
		path, token string
		want        int
	}{
		{"/v1/healthz", "", 401}, {"/v1/healthz", "x", 403}, {"/v1/healthz", token, 200},
		{"/v1/classes", "", 401}, {"/v1/classes", token, 200},
		{"/v1/model", "", 401}, {"/metrics", "", 401}, {"/metrics", token, 200},
	} {
		if code, _, b := do(t, "GET", hs.URL+tc.path, "", nil, tc.token, nil); code != tc.want {
			t.Errorf("GET %s with token %q: %d, want %d (%s)", tc.path, tc.token, code, tc.want, b)
		}
	}
}

// gatedBackend holds every learn until the test opens the gate.
type gatedBackend struct {
	*FileBackend
	started chan struct{}
	gate    chan struct{}
}

func (g *gatedBackend) Learn(ctx context.Context, x []float32, labels []string, opt deploy.LearnOptions) (LearnReport, ModelView, error) {
	g.started <- struct{}{}
	<-g.gate
	return g.FileBackend.Learn(ctx, x, labels, opt)
}

// TestQueueAndPredictsDuringLearn holds a learn in progress: predictions
// keep being answered from the old snapshot, one more learn queues, the
// next gets 503 with Retry-After, and once the gate opens both queued
// learns succeed in order.
func TestQueueAndPredictsDuringLearn(t *testing.T) {
	path := t.TempDir() + "/m.flycl"
	fb := newFileBackend(t, path)
	r := rand.New(rand.NewPCG(8, 9))
	x, y := clusters(r, []int{0, 1}, 20)
	names := []string{}
	flat := []float32{}
	for i := range x {
		flat = append(flat, x[i]...)
		names = append(names, className(y[i]))
	}
	if _, _, err := fb.Learn(context.Background(), flat, names, deploy.LearnOptions{}); err != nil {
		t.Fatal(err)
	}
	g := &gatedBackend{FileBackend: fb, started: make(chan struct{}, 4), gate: make(chan struct{})}
	s, err := New(Config{Backend: g, QueueLength: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := newLoopbackServer(t, s)

	results := make(chan int, 2)
	learn := func(c int) {
		x, y := clusters(r, []int{c}, 5)
		body := jsonBody(t, Request{Features: x, Label: className(y[0])})
		code, _, _ := do(t, "POST", hs+"/v1/learn", "application/json", body, "", nil)
		results <- code
	}
	go learn(2)
	<-g.started // the first learn is running and blocked
	go learn(3)
	waitFor(t, func() bool { return s.pending.Load() == 2 })
	// The queue is full: 503 with Retry-After.
	x3, _ := clusters(r, []int{4}, 2)
	code, h, b := do(t, "POST", hs+"/v1/learn", "application/json", jsonBody(t, Request{Features: x3, Label: "epsilon"}), "", nil)
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Fatalf("learn beyond the queue: %d (Retry-After %q) %s", code, h.Get("Retry-After"), b)
	}
	// Predictions are answered while the learn is held.
	for range 20 {
		var pr PredictResponse
		code, _, b := do(t, "POST", hs+"/v1/predict", "application/json", jsonBody(t, Request{Features: x[:3]}), "", &pr)
		if code != 200 || pr.Version != 1 {
			t.Fatalf("predict during learn: %d %s", code, b)
		}
	}
	close(g.gate)
	for range 2 {
		if c := <-results; c != 200 {
			t.Fatalf("queued learn: %d", c)
		}
	}
	if v := s.View().Version(); v != 3 {
		t.Fatalf("version %d after two more learns, want 3", v)
	}
}

func newLoopbackServer(t *testing.T, s *Server) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: s.Handler()}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return "http://" + ln.Addr().String()
}

// waitFor polls ok until it holds. It has no deadline of its own: a
// condition never reached fails the test at go test's -timeout.
func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for !ok() {
		select {
		case <-t.Context().Done():
			t.Fatal("test ended before the condition held")
		case <-time.After(time.Millisecond):
		}
	}
}

// TestConcurrentPredictsAndLearns runs predictors against a stream of
// learns (run it with -race): no predict fails, every predictor sees
// versions that never go back, and each answer is consistent with its
// own version (as many score columns as that version has classes).
func TestConcurrentPredictsAndLearns(t *testing.T) {
	s, hs, _ := testServer(t, nil)
	r := rand.New(rand.NewPCG(10, 11))
	x, y := clusters(r, []int{0, 1}, 20)
	learnFeatures(t, hs.URL, "", x, y)
	classesAt := sync.Map{} // version -> classes
	classesAt.Store(uint64(1), 2)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rr := rand.New(rand.NewPCG(uint64(w), 1))
			last := uint64(0)
			for {
				select {
				case <-stop:
					return
				default:
				}
				tx, _ := clusters(rr, []int{0, 1}, 4)
				var pr PredictResponse
				code, _, b := do(t, "POST", hs.URL+"/v1/predict", "application/json", jsonBody(t, Request{Features: tx, Top: 100}), "", &pr)
				if code != 200 {
					errs <- fmt.Errorf("predict: %d %s", code, b)
					return
				}
				if pr.Version < last {
					errs <- fmt.Errorf("version went back from %d to %d", last, pr.Version)
					return
				}
				last = pr.Version
				if n, ok := classesAt.Load(pr.Version); ok && len(pr.Predictions[0].Top) != n.(int) {
					errs <- fmt.Errorf("version %d answered with %d classes, has %d", pr.Version, len(pr.Predictions[0].Top), n)
					return
				}
			}
		}()
	}
	for c := 2; c < 6; c++ {
		x, y := clusters(r, []int{c}, 6)
		lr := learnFeatures(t, hs.URL, "", x, y)
		classesAt.Store(lr.Version, lr.Classes)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if v := s.View().Version(); v != 5 {
		t.Fatalf("version %d, want 5", v)
	}
}

func TestMetrics(t *testing.T) {
	_, hs, _ := testServer(t, nil)
	r := rand.New(rand.NewPCG(12, 13))
	x, y := clusters(r, []int{0, 1, 2}, 30)
	learnFeatures(t, hs.URL, "", x, y)
	for range 3 {
		do(t, "POST", hs.URL+"/v1/predict", "application/json", jsonBody(t, Request{Features: x[:2]}), "", nil)
	}
	do(t, "POST", hs.URL+"/v1/predict", "text/plain", nil, "", nil)
	_, _, b := do(t, "GET", hs.URL+"/metrics", "", nil, "", nil)
	for _, want := range []string{
		`flycl_http_requests_total{code="200",endpoint="predict"} 3`,
		`flycl_http_requests_total{code="415",endpoint="predict"} 1`,
		`flycl_http_requests_total{code="200",endpoint="learn"} 1`,
		`flycl_http_request_duration_seconds_count{endpoint="predict"} 4`,
		`flycl_learn_stage_duration_seconds_count{stage="gcv"} 1`,
		`flycl_learn_stage_duration_seconds_count{stage="save"} 1`,
		"flycl_model_version 1",
		"flycl_model_classes 3",
		"flycl_model_samples 30",
		`flycl_learns_total{result="ok"} 1`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// TestGracefulShutdown cancels Serve while a learn is in flight: the
// learn still completes with 200 and is saved, and Serve returns cleanly.
func TestGracefulShutdown(t *testing.T) {
	path := t.TempDir() + "/m.flycl"
	g := &gatedBackend{FileBackend: newFileBackend(t, path), started: make(chan struct{}, 1), gate: make(chan struct{})}
	s, err := New(Config{Backend: g})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln, DefaultTimeouts()) }()
	url := "http://" + ln.Addr().String()
	r := rand.New(rand.NewPCG(14, 15))
	x, y := clusters(r, []int{0, 1}, 10)
	res := make(chan LearnResponse, 1)
	go func() { res <- learnFeatures(t, url, "", x, y) }()
	<-g.started
	cancel()
	// Shutdown has closed the listener once a new connection is refused.
	waitFor(t, func() bool {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	close(g.gate)
	if lr := <-res; lr.Version != 1 {
		t.Fatalf("in-flight learn: %+v", lr)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if m := savedModel(t, path); m.Model.Version() != 1 {
		t.Fatalf("saved version %d", m.Model.Version())
	}
}

func TestPage(t *testing.T) {
	_, hs, _ := testServer(t, nil)
	code, h, b := do(t, "GET", hs.URL+"/", "", nil, "", nil)
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.Contains(string(b), `id="classify"`) {
		t.Fatalf("page: %d %s", code, h.Get("Content-Type"))
	}
	if strings.Contains(string(b), "http://") || strings.Contains(string(b), "https://") {
		t.Fatal("the page refers to outside assets")
	}
}

// TestForget drops one class by name and removes another exactly with its
// data; both are gone from the classes, the predictions and the saved file.
func TestForget(t *testing.T) {
	_, hs, path := testServer(t, nil)
	r := rand.New(rand.NewPCG(16, 17))
	x, y := clusters(r, []int{0, 1, 2, 3}, 80)
	learnFeatures(t, hs.URL, "", x, y)
	var fr ForgetResponse
	if code, _, b := do(t, "DELETE", hs.URL+"/v1/classes/beta", "", nil, "", &fr); code != 200 || fr.Exact || fr.Version != 2 {
		t.Fatalf("drop beta: %d %s", code, b)
	}
	var gamma [][]float32
	for i := range x {
		if y[i] == 2 {
			gamma = append(gamma, x[i])
		}
	}
	body := jsonBody(t, Request{Features: gamma})
	if code, _, b := do(t, "DELETE", hs.URL+"/v1/classes/gamma", "application/json", body, "", &fr); code != 200 || !fr.Exact || fr.Samples != 20 || fr.Version != 3 {
		t.Fatalf("forget gamma with its data: %d %s", code, b)
	}
	tx, _ := clusters(r, []int{0, 1, 2, 3}, 40)
	var pr PredictResponse
	do(t, "POST", hs.URL+"/v1/predict", "application/json", jsonBody(t, Request{Features: tx, Top: 10}), "", &pr)
	for _, p := range pr.Predictions {
		if len(p.Top) != 2 {
			t.Fatalf("%d classes after forgetting two of four", len(p.Top))
		}
		for _, s := range p.Top {
			if s.Class == "beta" || s.Class == "gamma" {
				t.Fatalf("forgotten class %s predicted", s.Class)
			}
		}
	}
	b := savedModel(t, path)
	names := b.Model.Classes().Names()
	if b.Model.Version() != 3 || strings.Join(names, ",") != "alpha,delta" {
		t.Fatalf("saved: version %d classes %v", b.Model.Version(), names)
	}
}

// TestBatchedPredicts sends many one-vector predicts at once (they are
// scored in shared batches) and checks each answer against the snapshot's
// scores of that vector alone: bit for bit, since a predictor's scores of
// a sample do not depend on the other samples of the call.
func TestBatchedPredicts(t *testing.T) {
	s, hs, _ := testServer(t, nil)
	r := rand.New(rand.NewPCG(20, 21))
	x, y := clusters(r, []int{0, 1, 2}, 30)
	learnFeatures(t, hs.URL, "", x, y)
	tx, _ := clusters(r, []int{0, 1, 2}, 48)
	sn := s.View()
	var wg sync.WaitGroup
	errs := make(chan error, len(tx))
	for i := range tx {
		wg.Go(func() {
			var pr PredictResponse
			code, _, b := do(t, "POST", hs.URL+"/v1/predict", "application/json", jsonBody(t, Request{Features: tx[i : i+1], Top: 3}), "", &pr)
			if code != 200 {
				errs <- fmt.Errorf("predict %d: %d %s", i, code, b)
				return
			}
			want, err := sn.Scores(context.Background(), tx[i])
			if err != nil {
				errs <- err
				return
			}
			for _, sc := range pr.Predictions[0].Top {
				j := indexOf(sn.Classes(), sc.Class)
				if math.Float32bits(sc.Score) != math.Float32bits(want[j]) {
					errs <- fmt.Errorf("vector %d class %s: %v batched, %v alone", i, sc.Class, sc.Score, want[j])
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestRunBatchIsExact scores one batch made of requests of 1, 2 and 3
// rows (deterministically: runBatch is called directly) and checks every
// request's scores against the snapshot's scores of that request alone,
// bit for bit; a cancelled request in the batch gets its error and
// changes nothing for the others.
func TestRunBatchIsExact(t *testing.T) {
	s, hs, _ := testServer(t, nil)
	r := rand.New(rand.NewPCG(22, 23))
	x, y := clusters(r, []int{0, 1, 2, 3}, 40)
	learnFeatures(t, hs.URL, "", x, y)
	sn := s.View()
	tx, _ := clusters(r, []int{0, 1, 2, 3}, 20)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	var batch []*scoreReq
	for i, rows := 0, 1; i+rows <= len(tx); i, rows = i+rows, rows%3+1 {
		var flat []float32
		for _, v := range tx[i : i+rows] {
			flat = append(flat, v...)
		}
		ctx := context.Background()
		if len(batch) == 3 {
			ctx = cancelled
		}
		batch = append(batch, &scoreReq{ctx: ctx, sn: sn, x: flat, done: make(chan scoreRes, 1)})
	}
	reqs := slices.Clone(batch) // runBatch reuses its argument's array
	s.runBatch(batch)
	for i, req := range reqs {
		got := <-req.done
		if i == 3 {
			if !errors.Is(got.err, context.Canceled) {
				t.Errorf("cancelled request: %v", got.err)
			}
			continue
		}
		want, err := sn.Scores(context.Background(), req.x)
		if err != nil || got.err != nil {
			t.Fatal(err, got.err)
		}
		if len(got.scores) != len(want) {
			t.Fatalf("request %d: %d scores, %d alone", i, len(got.scores), len(want))
		}
		for j := range want {
			if math.Float32bits(got.scores[j]) != math.Float32bits(want[j]) {
				t.Fatalf("request %d score %d: %v in the batch, %v alone", i, j, got.scores[j], want[j])
			}
		}
	}
}

// TestPipelineCheck: a model keeps the backbone it learned with. Another
// checkpoint is refused, the same one is accepted after a restart, and a
// model learned from bare feature vectors refuses any backbone.
func TestPipelineCheck(t *testing.T) {
	pipe := func(hash string) *modelfile.Pipeline {
		return &modelfile.Pipeline{Backbone: "grid", Name: "grid-mean", WeightsHash: hash, Output: "features", Dim: testDim,
			Transform: modelfile.Transform{Preset: "none", Resize: 8, Filter: "bilinear", Crop: 8, Mean: [3]float32{0, 0, 0}, Std: [3]float32{1, 1, 1}}}
	}
	path := t.TempDir() + "/m.flycl"
	b := newFileBackend(t, path)
	if err := b.SetPipeline(pipe("aaaa")); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(30, 31))
	x, y := clusters(r, []int{0, 1}, 10)
	var flat []float32
	var names []string
	for i := range x {
		flat = append(flat, x[i]...)
		names = append(names, className(y[i]))
	}
	if _, _, err := b.Learn(context.Background(), flat, names, deploy.LearnOptions{}); err != nil {
		t.Fatal(err)
	}
	b.Close() // a restart: one writer at a time
	b = newFileBackend(t, path)
	if err := b.SetPipeline(pipe("bbbb")); err == nil || !strings.Contains(err.Error(), "not the model's") {
		t.Fatalf("another checkpoint: %v", err)
	}
	if err := b.SetPipeline(pipe("aaaa")); err != nil {
		t.Fatalf("the same checkpoint after a restart: %v", err)
	}

	bare := newFileBackend(t, t.TempDir()+"/bare.flycl")
	if _, _, err := bare.Learn(context.Background(), flat, names, deploy.LearnOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := bare.SetPipeline(pipe("aaaa")); err == nil {
		t.Fatal("a model learned from feature vectors took a backbone")
	}
}
