package watch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flycl/flycl/vision/imageio"
)

func needFFmpeg(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skipf("ffmpeg not installed (apt-get install ffmpeg): %v", err)
	}
	return p
}

// TestFFmpegFile: a video made by ffmpeg of three colours, one second
// each at 10 frames/s, read at 5 frames/s and scaled to a shorter side of
// 32: 15 frames of 42×32 (64×48 keeping its aspect ratio, even width),
// five of each colour in order, and one event per colour.
func TestFFmpegFile(t *testing.T) {
	ff := needFFmpeg(t)
	path := filepath.Join(t.TempDir(), "colours.avi")
	out, err := exec.Command(ff, "-hide_banner", "-loglevel", "error",
		"-f", "lavfi", "-i", "color=c=red:s=64x48:d=1:r=10",
		"-f", "lavfi", "-i", "color=c=lime:s=64x48:d=1:r=10",
		"-f", "lavfi", "-i", "color=c=blue:s=64x48:d=1:r=10",
		"-filter_complex", "[0][1][2]concat=n=3:v=1", "-c:v", "mjpeg", "-q:v", "2", path).CombinedOutput()
	if err != nil {
		t.Fatalf("make the video: %v: %s", err, out)
	}
	src := &FFmpeg{Path: ff, Input: path, FPS: 5, ShortSide: 32}
	if src.Live() {
		t.Fatal("a file is live")
	}
	cl := &colourClassifier{}
	var buf bytes.Buffer
	st, err := Run(context.Background(), Config{Source: src, Classify: cl, Out: &buf, Debounce: 2, Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	frames, events := lines(t, buf.Bytes())
	if want := repeat(5, "red", "green", "blue"); !slices.Equal(answers(frames), want) {
		t.Fatalf("answers %v, want %v", answers(frames), want)
	}
	for _, s := range cl.sizes {
		if s != [2]int{42, 32} {
			t.Fatalf("a frame of %d×%d, want 42×32", s[0], s[1])
		}
	}
	var classes []string
	for _, e := range events {
		classes = append(classes, e.Class)
	}
	if !slices.Equal(classes, []string{"red", "green", "blue"}) || st.Frames != 15 {
		t.Fatalf("events %v, %d frames", classes, st.Frames)
	}
}

// TestFFmpegMissing: ffmpeg's own error ends Run for a file that does not
// exist.
func TestFFmpegMissing(t *testing.T) {
	ff := needFFmpeg(t)
	src := &FFmpeg{Path: ff, Input: filepath.Join(t.TempDir(), "none.mp4")}
	_, err := Run(context.Background(), Config{Source: src, Classify: &colourClassifier{}, Log: quiet()})
	var ee *ExitError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "No such file") {
		t.Fatalf("missing file: %v", err)
	}
}

// mjpegServer serves MJPEG over HTTP (multipart/x-mixed-replace, one JPEG
// per part): the n-th connection gets the frames of parts[n] and is then
// closed (the source drops); connections beyond them get 404.
func mjpegServer(t *testing.T, parts [][][]byte) (*httptest.Server, *atomic.Int32) {
	var conns atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(conns.Add(1)) - 1
		if i >= len(parts) {
			http.NotFound(w, r)
			return
		}
		const boundary = "frame"
		w.Header().Set("Content-Type", "multipart/x-mixed-replace;boundary="+boundary)
		for _, jpg := range parts[i] {
			fmt.Fprintf(w, "--%s\r\nContent-Type: image/jpeg\r\nContent-Length: %d\r\n\r\n", boundary, len(jpg))
			w.Write(jpg)
			w.Write([]byte("\r\n"))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &conns
}

func jpegOf(t *testing.T, name string, w, h int) []byte {
	c := colours[name]
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(c[0]), uint8(c[1]), uint8(c[2]), 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestFFmpegMJPEG: MJPEG over HTTP from a local server that drops the
// stream after six frames and then serves the rest: Run reconnects and
// every frame is classified in order (EveryFrame); when the server has no
// more, Run gives up after its retries.
func TestFFmpegMJPEG(t *testing.T) {
	ff := needFFmpeg(t)
	var parts [][][]byte
	for _, p := range [][]string{repeat(6, "red"), repeat(6, "green", "blue")} {
		var part [][]byte
		for _, n := range p {
			part = append(part, jpegOf(t, n, 40, 30))
		}
		parts = append(parts, part)
	}
	srv, conns := mjpegServer(t, parts)
	src := &FFmpeg{Path: ff, Input: srv.URL + "/stream.mjpg"}
	if !src.Live() {
		t.Fatal("an HTTP stream is not live")
	}
	var buf bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := Run(ctx, Config{Source: src, Classify: &colourClassifier{}, Out: &buf, Debounce: 2, Log: quiet(),
		EveryFrame: true, Backoff: 10 * time.Millisecond, Retries: 1})
	if err == nil || ctx.Err() != nil {
		t.Fatalf("a server with no more streams: %v (context %v)", err, ctx.Err())
	}
	frames, events := lines(t, buf.Bytes())
	if want := repeat(6, "red", "green", "blue"); !slices.Equal(answers(frames), want) {
		t.Fatalf("answers %v, want %v", answers(frames), want)
	}
	var classes []string
	for _, e := range events {
		classes = append(classes, e.Class)
	}
	if !slices.Equal(classes, []string{"red", "green", "blue"}) || st.Reconnects < 2 || conns.Load() < 3 {
		t.Fatalf("events %v, %d reconnects, %d connections", classes, st.Reconnects, conns.Load())
	}
}

// stopAfter is a colourClassifier that cancels the run after n frames.
type stopAfter struct {
	colourClassifier
	n      int
	cancel context.CancelFunc
}

func (s *stopAfter) Classify(ctx context.Context, img *imageio.RGB) (Prediction, error) {
	p, err := s.colourClassifier.Classify(ctx, img)
	s.mu.Lock()
	if s.calls == s.n {
		s.cancel()
	}
	s.mu.Unlock()
	return p, err
}

// TestFFmpegStop: a live MJPEG stream that never ends, read with stale
// frames skipped; cancelling the context (what SIGTERM does in flycl
// watch) ends Run with no error once ffmpeg has exited, and the server
// sees its client go.
func TestFFmpegStop(t *testing.T) {
	ff := needFFmpeg(t)
	frame := jpegOf(t, "blue", 40, 30)
	gone := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(gone)
		w.Header().Set("Content-Type", "multipart/x-mixed-replace;boundary=f")
		for {
			fmt.Fprintf(w, "--f\r\nContent-Type: image/jpeg\r\nContent-Length: %d\r\n\r\n", len(frame))
			w.Write(frame)
			if _, err := w.Write([]byte("\r\n")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cl := &stopAfter{n: 10, cancel: cancel}
	st, err := Run(ctx, Config{Source: &FFmpeg{Path: ff, Input: srv.URL}, Classify: cl, Log: quiet()})
	if err != nil || st.Classified < 10 || st.Reconnects != 0 {
		t.Fatalf("stopped: %v, %+v", err, st)
	}
	select {
	case <-gone:
	case <-time.After(30 * time.Second):
		t.Fatal("the server still serves ffmpeg after Run returned")
	}
}
