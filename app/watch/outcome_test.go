package watch

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/jpeg"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestFFmpegSingleJPEG: a source that is one JPEG image, read at 2
// frames/s as a video would be, is one frame (ffmpeg's fps filter alone
// gives none for an image, which has no duration), classified and an
// event.
func TestFFmpegSingleJPEG(t *testing.T) {
	ff := needFFmpeg(t)
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for i := range img.Pix {
		if i%4 == 0 || i%4 == 3 {
			img.Pix[i] = 255 // opaque red
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "one.jpg")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	st, err := Run(context.Background(), Config{Source: &FFmpeg{Path: ff, Input: path, FPS: 2, ShortSide: 32}, Classify: &colourClassifier{}, Out: &out, Debounce: 1, Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	frames, events := lines(t, out.Bytes())
	if !slices.Equal(answers(frames), []string{"red"}) || len(events) != 1 || st.Frames != 1 {
		t.Fatalf("one JPEG: answers %v, %d events, %d frames; want one red frame and its event", answers(frames), len(events), st.Frames)
	}
}

// TestRunNoFrames: a file source that ends without a frame ends Run with
// ErrNoFrames, not a clean end.
func TestRunNoFrames(t *testing.T) {
	src := &memSource{segments: [][]byte{nil}}
	st, err := Run(context.Background(), Config{Source: src, Classify: &colourClassifier{}, Log: quiet()})
	if !errors.Is(err, ErrNoFrames) || st.Frames != 0 {
		t.Fatalf("empty file: %v, %d frames", err, st.Frames)
	}
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// closedPort returns the address of a TCP port on 127.0.0.1 that nothing
// listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestPosterRefused: a webhook whose port is closed: the first failed
// attempt of each event is logged with its reason (connection refused)
// at Warn, also when the poster is stopped while it waits to retry, and
// the stats say that nothing was delivered (ErrUndelivered, with the
// reason). A receiver that takes one event of two is not an error.
func TestPosterRefused(t *testing.T) {
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil)) // Info and above, as flycl watch logs
	p := NewPoster("http://"+closedPort(t)+"/hook", PosterOptions{Backoff: time.Hour, Attempts: 3, Log: log})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	p.Send(Event{ID: 1, Class: "red"})
	p.Send(Event{ID: 2, Class: "blue"})
	for p.Stats().Retries == 0 { // the first attempt failed; the retry waits an hour
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	st := p.Stats()
	if st.Sent != 0 || st.Failed != 1 || st.Queued != 1 {
		t.Fatalf("stats %+v; want 1 failed and 1 unsent", st)
	}
	out := logs.String()
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "connection refused") || !strings.Contains(out, "not delivered") {
		t.Fatalf("the log does not say why:\n%s", out)
	}
	if err := st.Err(); !errors.Is(err, ErrUndelivered) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("stats error: %v", err)
	}
	if err := (PosterStats{Sent: 1, Failed: 1}).Err(); err != nil {
		t.Fatalf("one event of two delivered: %v", err)
	}
	if err := (PosterStats{}).Err(); err != nil {
		t.Fatalf("no event given: %v", err)
	}
}
