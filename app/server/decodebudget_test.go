package server

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flycl/flycl/vision/imageio"
)

// gateExtractor is the grid extractor that records the decoded pixels
// inside Features at once (the images a request holds decoded) and holds
// every batch of at least big pixels until open is closed.
type gateExtractor struct {
	gridExtractor
	big     int
	open    chan struct{}
	once    sync.Once
	entered chan int // the pixels of each big batch, as it enters

	mu        sync.Mutex
	now, peak int
}

// release lets every held batch go on (once; also when a test fails, so
// that its server can close).
func (e *gateExtractor) release() { e.once.Do(func() { close(e.open) }) }

func (e *gateExtractor) Features(ctx context.Context, imgs []*imageio.RGB) ([]float32, error) {
	px := 0
	for _, im := range imgs {
		px += im.W * im.H
	}
	e.mu.Lock()
	e.now += px
	e.peak = max(e.peak, e.now)
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.now -= px
		e.mu.Unlock()
	}()
	if px >= e.big {
		e.entered <- px
		<-e.open
	}
	return e.gridExtractor.Features(ctx, imgs)
}

// zeroPNG is an all-zero w×h greyscale PNG: a few hundred bytes that
// decode to w×h pixels (a decompression bomb in miniature).
func zeroPNG(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestDecodeBudget: images just under the pixel limit, sent at once, are
// decoded one at a time against the shared decoding budget (the pixels
// decoded at once stay within DecodePixels, where before two extraction
// slots held two), and a small image sent while they wait is answered
// before any of them finishes: it fits the pixels left, and a request
// waiting for pixels holds no extraction slot. A request that cannot get
// its pixels within DecodeWait is refused with 503 and Retry-After.
func TestDecodeBudget(t *testing.T) {
	const side, maxPx, budget = 100, 100 * 100, 15_000 // one big image fits, two do not
	ex := &gateExtractor{big: side * side, open: make(chan struct{}), entered: make(chan int, 8)}
	srv, hs, _ := testServer(t, func(c *Config) {
		c.Extractor = ex
		c.MaxPixels = maxPx
		c.DecodePixels = budget
		c.Extractions = 2
	})
	t.Cleanup(ex.release) // runs before the server closes
	r := rand.New(rand.NewPCG(1, 2))
	x, y := clusters(r, []int{0, 1}, 20)
	learnFeatures(t, hs.URL, "", x, y)

	big := zeroPNG(t, side, side)
	if len(big) > 1000 {
		t.Fatalf("the all-zero PNG is %d bytes: not a bomb", len(big))
	}
	ctype, body := multipartBody(t, [][]byte{big}, nil)
	const bigs = 4
	codes := make(chan int, bigs)
	for range bigs {
		go func() {
			resp, err := http.Post(hs.URL+"/v1/predict", ctype, bytes.NewReader(body))
			if err != nil {
				codes <- -1
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	// Deadlock guard only (no timing is measured): without the budget the
	// small request below waits for the big ones forever.
	guard := time.After(60 * time.Second)
	select {
	case <-ex.entered:
	case <-guard:
		t.Fatal("no big image reached the extractor")
	}
	// One big image is held in the extractor; the others wait for pixels.
	smallType, smallBody := multipartBody(t, [][]byte{pngOf(t, 20, 20, color.RGBA{30, 60, 90, 255}, 3)}, nil)
	small := make(chan int, 1)
	go func() {
		resp, err := http.Post(hs.URL+"/v1/predict", smallType, bytes.NewReader(smallBody))
		if err != nil {
			small <- -1
			return
		}
		resp.Body.Close()
		small <- resp.StatusCode
	}()
	select {
	case code := <-small:
		if code != http.StatusOK {
			t.Fatalf("small predict while big ones wait: status %d", code)
		}
	case <-guard:
		t.Fatal("the small predict waited for the big images")
	case code := <-codes:
		t.Fatalf("a big image finished (status %d) while the extractor held it", code)
	}

	// A second server with a short wait: the big image that cannot get its
	// pixels is refused with 503 and Retry-After, not queued without end.
	ex2 := &gateExtractor{big: side * side, open: make(chan struct{}), entered: make(chan int, 8)}
	_, hs2, _ := testServer(t, func(c *Config) {
		c.Extractor = ex2
		c.MaxPixels = maxPx
		c.DecodePixels = budget
		c.DecodeWait = 50 * time.Millisecond
	})
	t.Cleanup(ex2.release)
	learnFeatures(t, hs2.URL, "", x, y)
	first := make(chan int, 1)
	go func() {
		resp, err := http.Post(hs2.URL+"/v1/predict", ctype, bytes.NewReader(body))
		if err != nil {
			first <- -1
			return
		}
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	select {
	case <-ex2.entered:
	case <-guard:
		t.Fatal("no big image reached the second server's extractor")
	}
	code, hdr, b := do(t, "POST", hs2.URL+"/v1/predict", ctype, body, "", nil)
	if code != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" || !strings.Contains(string(b), "pixels") {
		t.Fatalf("big image over the budget with a 50 ms wait: %d (Retry-After %q) %s", code, hdr.Get("Retry-After"), b)
	}
	ex2.release()
	if c := <-first; c != http.StatusOK {
		t.Fatalf("the held big image: status %d", c)
	}

	// Let the big images through: every one is answered, one at a time.
	ex.release()
	for range bigs {
		if c := <-codes; c != http.StatusOK {
			t.Fatalf("big predict: status %d", c)
		}
	}
	ex.mu.Lock()
	peak := ex.peak
	ex.mu.Unlock()
	if peak > budget || srv.pixels.Peak() > budget {
		t.Fatalf("decoded pixels at once: %d in the extractor, %d in the budget; budget %d", peak, srv.pixels.Peak(), budget)
	}
	if srv.pixels.InUse() != 0 {
		t.Fatalf("%d pixels still held after every request", srv.pixels.InUse())
	}
}
