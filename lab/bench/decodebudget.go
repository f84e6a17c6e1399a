package bench

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/server"
	apipkg "github.com/flycl/flycl/app/server/api"
	"github.com/flycl/flycl/internal/procmem"
	"github.com/flycl/flycl/vision/backbone"
)

// DecodeBudgetOptions are the inputs of DecodeBudget.
type DecodeBudgetOptions struct {
	Backbone *backbone.Model // the served backbone (its "features" output and own preset)
	Spec     string          // what Backbone was opened from
	Side     int             // the large images are Side×Side all-zero RGB PNGs
	Large    int             // large predicts sent at once
	Budget   int64           // the server's DecodePixels (-1: no budget)
}

// DecodeBudgetResult is what one burst cost.
type DecodeBudgetResult struct {
	Budget      int64   `json:"budget"`       // DecodePixels (-1: none)
	PNGBytes    int     `json:"png_bytes"`    // the large PNG's size
	Rise        int64   `json:"rise"`         // peak RSS above the RSS before the burst, bytes
	Small       float64 `json:"small"`        // the small predict's latency, seconds
	SmallStatus int     `json:"small_status"` // its HTTP status
	OK          int     `json:"ok"`           // large predicts answered 200
	Refused     int     `json:"refused"`      // large predicts answered 503
	Wall        float64 `json:"wall"`         // the burst's wall time, seconds
}

// DecodeBudget measures what many large images sent at once cost the
// server, in this process on loopback (run it once per process: the
// peak RSS of one burst is only comparable to another's from a fresh
// process): Large concurrent predicts of a Side×Side all-zero RGB PNG (a
// hundred kB that decodes to Side² pixels) and, half a second later, one
// small predict (a 224×224 photo-like PNG). It returns the rise of the
// process's peak RSS over its resident size before the burst, the small
// predict's latency, the large predicts' statuses and the burst's wall
// time.
func DecodeBudget(ctx context.Context, o DecodeBudgetOptions) (DecodeBudgetResult, error) {
	var res DecodeBudgetResult
	if o.Side < 1 || o.Large < 1 {
		return res, fmt.Errorf("bench: side %d, %d large predicts: want positive counts", o.Side, o.Large)
	}
	bb := o.Backbone
	big := zeroRGBPNG(o.Side)
	small := photoPNG(224, 224)
	if !procmem.ResetPeak() {
		return res, fmt.Errorf("bench: cannot reset the peak RSS (/proc/self/clear_refs): the rise could not be measured")
	}
	ex, err := servedExtractor(bb, false)
	if err != nil {
		return res, err
	}
	defer ex.Close()
	dir, err := os.MkdirTemp("", "flycl-bench-decode-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	be, err := server.OpenFile(filepath.Join(dir, "m.flycl"), func() (*flycl.Model, error) {
		return flycl.New(flycl.Config{M: 2000, P: 50, K: 600, Seed: 1, Lambdas: []float64{1, 10, 100}}, bb.Dim())
	})
	if err != nil {
		return res, err
	}
	defer be.Close()
	if err := be.SetPipeline(mustPipeline(o.Spec, bb)); err != nil {
		return res, err
	}
	budget := o.Budget
	if budget < 0 {
		budget = math.MaxInt64 // no bound
	}
	srv, err := server.New(server.Config{Backend: be, Extractor: ex, DecodePixels: budget, DecodeWait: 2 * time.Minute})
	if err != nil {
		return res, err
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return res, err
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan struct{})
	go func() { srv.Serve(sctx, ln, server.DefaultTimeouts()); close(served) }()
	defer func() { stop(); <-served }()
	url := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 10 * time.Minute}
	c := apipkg.NewClient(url, "")
	c.HTTP = client
	r := rand.New(rand.NewPCG(1, 2))
	var x [][]float32
	var y []string
	for j := range 20 {
		v := make([]float32, bb.Dim())
		for k := range v {
			v[k] = float32(r.NormFloat64())
		}
		x, y = append(x, v), append(y, fmt.Sprintf("class%d", j%2))
	}
	if _, err := c.Learn(ctx, apipkg.Request{Features: x, Labels: y}); err != nil {
		return res, err
	}
	// warm up: one small and one large predict (ONNX Runtime's arena,
	// the decoders' first allocations)
	for _, b := range [][]byte{small, big} {
		if code, err := postImage(client, url, b); err != nil || code != http.StatusOK {
			return res, fmt.Errorf("warm-up predict: status %d, %v", code, err)
		}
	}
	runtime.GC()
	debug.FreeOSMemory()
	base := procmem.Current()
	procmem.ResetPeak()

	res.Budget, res.PNGBytes = o.Budget, len(big)
	t0 := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range o.Large {
		wg.Go(func() {
			code, err := postImage(client, url, big)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				firstErr = cmpErr(firstErr, err)
			case code == http.StatusOK:
				res.OK++
			case code == http.StatusServiceUnavailable:
				res.Refused++
			default:
				firstErr = cmpErr(firstErr, fmt.Errorf("large predict: status %d", code))
			}
		})
	}
	time.Sleep(500 * time.Millisecond)
	t1 := time.Now()
	code, err := postImage(client, url, small)
	res.Small, res.SmallStatus = time.Since(t1).Seconds(), code
	wg.Wait()
	res.Wall = time.Since(t0).Seconds()
	res.Rise = procmem.Peak() - base
	return res, cmpErr(firstErr, err)
}

// PrintDecodeBudget prints DecodeBudget's results side by side.
func PrintDecodeBudget(out io.Writer, backbone string, side, large int, rs []DecodeBudgetResult) {
	png := 0
	if len(rs) > 0 {
		png = rs[0].PNGBytes
	}
	fmt.Fprintf(out, "flycl-lab bench decode-budget: %s, %d concurrent predicts of a %d×%d all-zero RGB PNG (%d bytes, %.1f megapixels), one 224×224 predict 0.5 s later; %d CPUs; one process per budget\n\n",
		backbone, large, side, side, png, float64(side)*float64(side)/1e6, runtime.NumCPU())
	fmt.Fprintf(out, "%-16s %14s %14s %9s %10s %8s\n", "decode budget", "peak RSS rise", "small predict", "large ok", "large 503", "wall")
	for _, r := range rs {
		name := "none"
		if r.Budget > 0 {
			name = fmt.Sprintf("%.0f megapixels", float64(r.Budget)/1e6)
		}
		small := fmt.Sprintf("%.2f s", r.Small)
		if r.SmallStatus != http.StatusOK {
			small += fmt.Sprintf(" (%d)", r.SmallStatus)
		}
		fmt.Fprintf(out, "%-16s %11.0f MB %14s %9d %10d %6.1f s\n", name, float64(r.Rise)/1e6, small, r.OK, r.Refused, r.Wall)
	}
}

// zeroRGBPNG is an all-zero side×side RGB PNG (black and opaque: colour
// type 2, as a camera's).
func zeroRGBPNG(side int) []byte {
	black := image.NewRGBA(image.Rect(0, 0, side, side))
	for i := 3; i < len(black.Pix); i += 4 {
		black.Pix[i] = 255
	}
	var b bytes.Buffer
	png.Encode(&b, black)
	return b.Bytes()
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// postImage sends one image to /v1/predict as a multipart form and
// returns the status.
func postImage(client *http.Client, url string, img []byte) (int, error) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	p, _ := w.CreateFormFile("image", "image.png")
	p.Write(img)
	w.Close()
	resp, err := client.Post(url+"/v1/predict", w.FormDataContentType(), &b)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// photoPNG is a w×h PNG of smooth colour gradients with noise (a small
// photo's decoding work).
func photoPNG(w, h int) []byte {
	im := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(3, 4))
	for y := range h {
		for x := range w {
			im.Set(x, y, color.RGBA{uint8(x + r.IntN(9)), uint8(y + r.IntN(9)), uint8((x + y) / 2), 255})
		}
	}
	var b bytes.Buffer
	png.Encode(&b, im)
	return b.Bytes()
}
