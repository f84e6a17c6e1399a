package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/vision/imageio"
	"golang.org/x/image/tiff"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWriteJSONNaN: a value JSON cannot encode gives a 500 with an error
// body, not the intended status with an empty body.
func TestWriteJSONNaN(t *testing.T) {
	rec := httptest.NewRecorder()
	writeJSON(rec, http.StatusOK, []float32{float32(math.NaN())})
	var e ErrorBody
	if rec.Code != http.StatusInternalServerError || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Status != 500 {
		t.Fatalf("writeJSON(NaN): %d %q", rec.Code, rec.Body.Bytes())
	}
}

// TestPredictHugeFeatures: finite features so large that the scores
// overflow (3e38 summed over the projection) are the client's error: 400
// with a JSON body, never a 200 with an empty body.
func TestPredictHugeFeatures(t *testing.T) {
	_, hs, _ := testServer(t, nil)
	r := rand.New(rand.NewPCG(11, 12))
	x, y := clusters(r, []int{0, 1}, 20)
	learnFeatures(t, hs.URL, "", x, y)
	q := make([]float32, testDim)
	for i := range q {
		q[i] = 3e38
	}
	code, _, b := do(t, "POST", hs.URL+"/v1/predict", "application/json", jsonBody(t, Request{Features: [][]float32{x[0], q}}), "", nil)
	var e ErrorBody
	if code != http.StatusBadRequest || json.Unmarshal(b, &e) != nil || !strings.Contains(e.Error, "sample 1") || !strings.Contains(e.Error, "too large") {
		t.Fatalf("predict of 3e38 features: %d %q", code, b)
	}
}

// TestEmptyRowsAllocation: a small body of many empty feature rows is
// refused without allocating rows×d floats (before the fix, 4000 empty
// rows at d=16384 allocated 256 MiB).
func TestEmptyRowsAllocation(t *testing.T) {
	s, _, _ := testServer(t, nil)
	const rows, d = 4000, 1 << 14
	body := `{"features":[` + strings.Repeat(`[],`, rows-1) + `[]]}`
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	req := httptest.NewRequest("POST", "/v1/predict", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	_, err := s.readInput(req, d, nil)
	runtime.ReadMemStats(&after)
	var ae *apiError
	if !errors.As(err, &ae) || ae.code != http.StatusBadRequest || !strings.Contains(ae.msg, "features[0]") {
		t.Fatalf("empty rows: %v", err)
	}
	// The body is 12 KB; its rows decode to 4000 slice headers (96 KB).
	// Allow 16 MiB for the decoder and anything else running, far below
	// the 256 MiB of rows×d.
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Fatalf("allocated %d bytes for a %d-byte body", got, len(body))
	}
}

// batchExtractor records the batches it is given.
type batchExtractor struct {
	gridExtractor
	mu      sync.Mutex
	batches [][2]int // images, pixels
}

func (e *batchExtractor) Features(ctx context.Context, imgs []*imageio.RGB) ([]float32, error) {
	px := 0
	for _, im := range imgs {
		px += im.W * im.H
	}
	e.mu.Lock()
	e.batches = append(e.batches, [2]int{len(imgs), px})
	e.mu.Unlock()
	return e.gridExtractor.Features(ctx, imgs)
}

// TestImageLimitsAndFormats: TIFF and PGM/PPM (read by the CLI) are
// accepted too; the pixels of all a request's images are bounded; images
// are decoded and extracted in batches of at most 16 images and about
// MaxPixels pixels, and give the features of one image at a time.
func TestImageLimitsAndFormats(t *testing.T) {
	ex := &batchExtractor{}
	_, hs, _ := testServer(t, func(c *Config) { c.Extractor = ex; c.MaxPixels = 1000; c.MaxRequestPixels = 30 * 256 })
	pngs := make([]string, 30)
	var want [][]float32
	for i := range pngs {
		b := pngOf(t, 16, 16, color.RGBA{uint8(8 * i), 100, 200, 255}, uint64(i))
		pngs[i] = base64.StdEncoding.EncodeToString(b)
		im, err := imageio.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := gridExtractor{}.Features(context.Background(), []*imageio.RGB{im})
		want = append(want, f)
	}
	labels := make([]string, len(pngs))
	for i := range labels {
		labels[i] = className(i % 2)
	}
	var lr LearnResponse
	if code, _, b := do(t, "POST", hs.URL+"/v1/learn", "application/json", jsonBody(t, Request{Images: pngs, Labels: labels}), "", &lr); code != 200 || lr.Samples != 30 {
		t.Fatalf("learn of 30 images: %d %s", code, b)
	}
	for _, b := range ex.batches {
		if b[0] > ExtractBatch || (b[0] > 1 && b[1] > 1000) {
			t.Fatalf("batch of %d images, %d pixels", b[0], b[1])
		}
	}
	// One pixel more than the request limit.
	extra := base64.StdEncoding.EncodeToString(pngOf(t, 1, 1, color.RGBA{1, 2, 3, 255}, 1))
	code, _, b := do(t, "POST", hs.URL+"/v1/predict", "application/json", jsonBody(t, Request{Images: append(slices.Clone(pngs), extra)}), "", nil)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "in all") {
		t.Fatalf("request over the pixel limit: %d %s", code, b)
	}
	// TIFF and PPM of the same pixels as a PNG.
	im, _ := imageio.Decode(pngOf(t, 16, 16, color.RGBA{200, 10, 10, 255}, 5))
	rgba := image.NewRGBA(image.Rect(0, 0, im.W, im.H))
	for y := range im.H {
		for x := range im.W {
			r, g, bb := im.At(x, y)
			rgba.Set(x, y, color.RGBA{r, g, bb, 255})
		}
	}
	var tb bytes.Buffer
	if err := tiff.Encode(&tb, rgba, nil); err != nil {
		t.Fatal(err)
	}
	ppm := append([]byte(fmt.Sprintf("P6\n%d %d\n255\n", im.W, im.H)), im.Pix...)
	var ref PredictResponse
	var pb bytes.Buffer
	if err := png.Encode(&pb, rgba); err != nil {
		t.Fatal(err)
	}
	if code, _, b := do(t, "POST", hs.URL+"/v1/predict", "application/json", jsonBody(t, Request{Images: []string{base64.StdEncoding.EncodeToString(pb.Bytes())}}), "", &ref); code != 200 {
		t.Fatalf("png: %d %s", code, b)
	}
	for name, enc := range map[string][]byte{"tiff": tb.Bytes(), "ppm": ppm} {
		var pr PredictResponse
		code, _, b := do(t, "POST", hs.URL+"/v1/predict", "application/json", jsonBody(t, Request{Images: []string{base64.StdEncoding.EncodeToString(enc)}}), "", &pr)
		if code != 200 || !reflect.DeepEqual(pr.Predictions, ref.Predictions) {
			t.Fatalf("%s: %d %s, want the PNG's %+v", name, code, b, ref.Predictions)
		}
	}
}

// TestSubmitAfterClose: a change submitted after Close is refused; before
// the fix, with the stop channel closed and room in the queue, submit
// could enqueue a job no learner would run and wait for it forever (the
// hang shows as the test binary's timeout).
func TestSubmitAfterClose(t *testing.T) {
	for range 50 {
		s, err := New(Config{Backend: newFileBackend(t, t.TempDir()+"/m.flycl")})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if !s.reserve() {
			t.Fatal("reserve on an idle server")
		}
		err = s.submit(func(context.Context) (ModelView, error) { return nil, errors.New("ran after Close") })
		if !errors.Is(err, errShutdown) {
			t.Fatalf("submit after Close: %v", err)
		}
		if p := s.pending.Load(); p != 0 {
			t.Fatalf("%d places still reserved", p)
		}
	}
}

// panicBackend panics in its first Learn.
type panicBackend struct {
	*FileBackend
	panicked bool
}

func (p *panicBackend) Learn(ctx context.Context, x []float32, labels []string, opt deploy.LearnOptions) (LearnReport, ModelView, error) {
	if !p.panicked {
		p.panicked = true
		panic("backend bug")
	}
	return p.FileBackend.Learn(ctx, x, labels, opt)
}

// TestLearnPanic: a panic in the backend's Learn answers that request
// with a 500; the learner goes on, so the next learn succeeds.
func TestLearnPanic(t *testing.T) {
	s, err := New(Config{Backend: &panicBackend{FileBackend: newFileBackend(t, t.TempDir()+"/m.flycl")}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	x, y := clusters(rand.New(rand.NewPCG(3, 4)), []int{0, 1}, 10)
	code, _, b := do(t, "POST", hs.URL+"/v1/learn", "application/json", jsonBody(t, Request{Features: x, Labels: []string{"a"}}), "", nil)
	if code != http.StatusInternalServerError || !strings.Contains(string(b), "panicked") {
		t.Fatalf("learn with a panicking backend: %d %s", code, b)
	}
	if lr := learnFeatures(t, hs.URL, "", x, y); lr.Version != 1 || s.pending.Load() != 0 {
		t.Fatalf("learn after the panic: version %d, %d pending", lr.Version, s.pending.Load())
	}
}

// TestCurrentRace: FileBackend.Current may be called from any goroutine
// while Learn runs (run with -race: before the fix the published
// snapshot was a plain field).
func TestCurrentRace(t *testing.T) {
	b := newFileBackend(t, t.TempDir()+"/m.flycl")
	r := rand.New(rand.NewPCG(5, 6))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		var last uint64
		for {
			select {
			case <-stop:
				return
			default:
			}
			if v := b.Current().Version(); v < last {
				t.Errorf("version went back from %d to %d", last, v)
			} else {
				last = v
			}
		}
	})
	for c := range 3 {
		x, _ := clusters(r, []int{c}, 6)
		var flat []float32
		for _, v := range x {
			flat = append(flat, v...)
		}
		if _, _, err := b.Learn(context.Background(), flat, slices.Repeat([]string{className(c)}, len(x)), deploy.LearnOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if v := b.Current().Version(); v != 3 {
		t.Fatalf("version %d after 3 learns", v)
	}
}

// TestSlowUploadsHoldNoQueuePlace: learns whose bodies are still being
// uploaded do not take places in the learn queue (before the fix they
// did, from the first byte, so slow uploads could fill it and every
// other learn got 503). Each slow upload's handler is known to be reading
// its body because it asked for it (Expect: 100-continue).
func TestSlowUploadsHoldNoQueuePlace(t *testing.T) {
	s, hs, _ := testServer(t, func(c *Config) { c.QueueLength = 1 })
	r := rand.New(rand.NewPCG(21, 22))
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: time.Hour}}
	type slow struct {
		w    *io.PipeWriter
		body []byte
		code chan int
	}
	var uploads []slow
	for c := range 2 { // QueueLength+1 places in all
		x, _ := clusters(r, []int{c}, 4)
		pr, pw := io.Pipe()
		req, err := http.NewRequest("POST", hs.URL+"/v1/learn", pr)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Expect", "100-continue")
		reading := make(chan struct{})
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{Got100Continue: func() { close(reading) }}))
		u := slow{w: pw, body: jsonBody(t, Request{Features: x, Label: className(c)}), code: make(chan int, 1)}
		t.Cleanup(func() { pw.CloseWithError(errors.New("test over")) }) // before the server's Close
		go func() {
			resp, err := client.Do(req)
			if err != nil {
				u.code <- 0
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			u.code <- resp.StatusCode
		}()
		select {
		case <-reading:
		case c := <-u.code:
			t.Fatalf("slow upload answered %d before reading its body", c)
		}
		uploads = append(uploads, u)
	}
	x, y := clusters(r, []int{2, 3}, 8)
	if lr := learnFeatures(t, hs.URL, "", x, y); lr.Version != 1 {
		t.Fatalf("learn beside two slow uploads: version %d", lr.Version)
	}
	for _, u := range uploads {
		u.w.Write(u.body)
		u.w.Close()
		if c := <-u.code; c != http.StatusOK {
			t.Fatalf("slow upload: %d", c)
		}
	}
	if v := s.View().Version(); v != 3 || s.pending.Load() != 0 {
		t.Fatalf("version %d, %d pending after three learns", v, s.pending.Load())
	}
}
