package watch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/vision/imageio"
)

// colours are the classes of colourClassifier.
var colours = map[string][3]float64{"red": {255, 0, 0}, "green": {0, 255, 0}, "blue": {0, 0, 255}, "black": {0, 0, 0}, "white": {255, 255, 255}}

func solid(w, h int, c [3]float64) *imageio.RGB {
	img := imageio.NewRGB(w, h)
	for i := 0; i < len(img.Pix); i += 3 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2] = uint8(c[0]), uint8(c[1]), uint8(c[2])
	}
	return img
}

// colourClassifier answers the colour nearest to a frame's mean; it
// records the buffers it was given and can be slowed down.
type colourClassifier struct {
	delay   time.Duration
	mu      sync.Mutex
	buffers map[*uint8]bool
	sizes   [][2]int
	fail    int // fail at this call (1-based; 0: never)
	calls   int
}

func (c *colourClassifier) Classify(ctx context.Context, img *imageio.RGB) (Prediction, error) {
	c.mu.Lock()
	c.calls++
	if c.buffers == nil {
		c.buffers = map[*uint8]bool{}
	}
	c.buffers[&img.Pix[0]] = true
	c.sizes = append(c.sizes, [2]int{img.W, img.H})
	fail := c.calls == c.fail
	c.mu.Unlock()
	if fail {
		return Prediction{}, errors.New("classifier broke")
	}
	time.Sleep(c.delay)
	var m [3]float64
	for i := 0; i < len(img.Pix); i += 3 {
		for k := range 3 {
			m[k] += float64(img.Pix[i+k])
		}
	}
	n := float64(img.W * img.H)
	var best string
	bestD := -1.0
	for name, c := range colours {
		d := 0.0
		for k := range 3 {
			d += (m[k]/n - c[k]) * (m[k]/n - c[k])
		}
		if bestD < 0 || d < bestD || d == bestD && name < best {
			best, bestD = name, d
		}
	}
	return Prediction{Top: []flycl.Ranked{{Name: best, Score: 1}}, Answer: best}, nil
}

// memSource serves streams of PPM bytes: one segment per Open; past the
// last segment Open fails (or, with hang, serves a stream that never
// gives a frame).
type memSource struct {
	segments [][]byte
	live     bool
	hang     bool
	opens    atomic.Int32
}

func (s *memSource) Live() bool     { return s.live }
func (s *memSource) String() string { return "mem" }
func (s *memSource) Open(ctx context.Context) (Stream, error) {
	i := int(s.opens.Add(1)) - 1
	if i >= len(s.segments) {
		if s.hang {
			return &hangStream{closed: make(chan struct{})}, nil
		}
		return nil, fmt.Errorf("segment %d: gone", i)
	}
	return &readerStream{NewReader(bytes.NewReader(s.segments[i]), 0)}, nil
}

type readerStream struct{ r *Reader }

func (s *readerStream) Next(dst *imageio.RGB) (*imageio.RGB, error) { return s.r.Next(dst) }
func (s *readerStream) Close() error                                { return nil }

type hangStream struct {
	once   sync.Once
	closed chan struct{}
}

func (s *hangStream) Next(*imageio.RGB) (*imageio.RGB, error) {
	<-s.closed
	return nil, errors.New("closed")
}
func (s *hangStream) Close() error { s.once.Do(func() { close(s.closed) }); return nil }

// video encodes frames of the named colours as PPM.
func video(names ...string) []byte {
	var b []byte
	for _, n := range names {
		b = append(b, ppm(solid(8, 6, colours[n]))...)
	}
	return b
}

func repeat(n int, names ...string) []string {
	var out []string
	for _, s := range names {
		for range n {
			out = append(out, s)
		}
	}
	return out
}

// lines parses Run's output.
func lines(t *testing.T, out []byte) (frames []FrameLine, events []EventLine) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var head struct{ Type string }
		if err := json.Unmarshal(sc.Bytes(), &head); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		switch head.Type {
		case "frame":
			var f FrameLine
			json.Unmarshal(sc.Bytes(), &f)
			frames = append(frames, f)
		case "event":
			var e EventLine
			json.Unmarshal(sc.Bytes(), &e)
			events = append(events, e)
		default:
			t.Fatalf("line of type %q", head.Type)
		}
	}
	return frames, events
}

type sink struct {
	mu     sync.Mutex
	events []Event
}

func (s *sink) Send(e Event) { s.mu.Lock(); s.events = append(s.events, e); s.mu.Unlock() }

func answers(frames []FrameLine) []string {
	var a []string
	for _, f := range frames {
		a = append(a, f.Answer)
	}
	return a
}

// TestRunFile: a file source's every frame is classified in order, the
// events are the debounced changes (a one-frame flicker is not one), and
// Run ends at the end of the file.
func TestRunFile(t *testing.T) {
	seq := append(repeat(4, "red", "green"), "blue")
	seq = append(seq, repeat(3, "green", "white")...)
	src := &memSource{segments: [][]byte{video(seq...)}}
	var out bytes.Buffer
	ev := &sink{}
	st, err := Run(context.Background(), Config{Source: src, Classify: &colourClassifier{}, Out: &out, Events: ev, Debounce: 2, Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	frames, events := lines(t, out.Bytes())
	if !slices.Equal(answers(frames), seq) {
		t.Fatalf("answers %v, want %v", answers(frames), seq)
	}
	for i, f := range frames {
		if f.Frame != i {
			t.Fatalf("line %d is frame %d", i, f.Frame)
		}
	}
	want := []Event{{ID: 1, Class: "red", Frame: 1, Since: 0}, {ID: 2, Previous: "red", Class: "green", Frame: 5, Since: 4},
		{ID: 3, Previous: "green", Class: "white", Frame: 13, Since: 12}}
	var got []Event
	for _, e := range events {
		e.Event.Time, e.Event.Source, e.Event.Score = time.Time{}, "", 0
		got = append(got, e.Event)
	}
	if !slices.Equal(got, want) || len(ev.events) != 3 {
		t.Fatalf("events %+v (%d sent), want %+v", got, len(ev.events), want)
	}
	if st.Frames != len(seq) || st.Classified != len(seq) || st.Stale != 0 || st.Events != 3 || st.Reconnects != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestRunFileErrors: a truncated file ends Run with the reader's error
// after its complete frames; a classifier error ends a live source too.
func TestRunFileErrors(t *testing.T) {
	b := video("red", "green")
	src := &memSource{segments: [][]byte{b[:len(b)-5]}}
	var out bytes.Buffer
	_, err := Run(context.Background(), Config{Source: src, Classify: &colourClassifier{}, Out: &out, Log: quiet()})
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("truncated file: %v", err)
	}
	if frames, _ := lines(t, out.Bytes()); !slices.Equal(answers(frames), []string{"red"}) {
		t.Fatalf("truncated file: %v", answers(frames))
	}
	live := &memSource{segments: [][]byte{video(repeat(5, "red")...)}, live: true}
	if _, err := Run(context.Background(), Config{Source: live, Classify: &colourClassifier{fail: 1}, Log: quiet(), Retries: 1, Backoff: time.Millisecond}); err == nil || live.opens.Load() != 1 {
		t.Fatalf("classifier error on a live source: %v after %d opens", err, live.opens.Load())
	}
}

// TestRunReconnects: a live source that drops twice mid-stream is
// reopened each time and its frames continue the sequence; when it stays
// gone, Run gives up after Retries reconnections.
func TestRunReconnects(t *testing.T) {
	seq := repeat(3, "red", "green", "blue")
	src := &memSource{live: true, segments: [][]byte{video(seq[:4]...), video(seq[4:7]...), video(seq[7:]...)}}
	var out bytes.Buffer
	st, err := Run(context.Background(), Config{Source: src, Classify: &colourClassifier{}, Out: &out, Debounce: 2, Log: quiet(),
		Backoff: time.Millisecond, Retries: 2, EveryFrame: true})
	if err == nil {
		t.Fatal("a source that stays gone: no error")
	}
	frames, events := lines(t, out.Bytes())
	if !slices.Equal(answers(frames), seq) {
		t.Fatalf("answers %v, want %v", answers(frames), seq)
	}
	var classes []string
	for _, e := range events {
		classes = append(classes, e.Class)
	}
	if !slices.Equal(classes, []string{"red", "green", "blue"}) {
		t.Fatalf("events %v", classes)
	}
	// 3 segments, then Retries=2 reconnections that bring no frame
	if src.opens.Load() != 5 || st.Reconnects != 4 {
		t.Fatalf("%d opens, %d reconnects; want 5 and 4", src.opens.Load(), st.Reconnects)
	}
}

// TestRunStallAndStop: a live stream that gives no frame is closed after
// Stall and reopened; cancelling the context stops Run with no error.
func TestRunStallAndStop(t *testing.T) {
	src := &memSource{live: true, hang: true, segments: [][]byte{video("red")}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var st Stats
	var err error
	go func() {
		st, err = Run(ctx, Config{Source: src, Classify: &colourClassifier{}, Log: quiet(), Backoff: time.Millisecond, Stall: 5 * time.Millisecond})
		close(done)
	}()
	for src.opens.Load() < 4 { // the frame, then stalled streams reopened
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if err != nil || st.Classified != 1 {
		t.Fatalf("stopped: %v, %+v", err, st)
	}
}

// endless is a live stream that gives frames as fast as it is read.
type endless struct{ n int }

func (e *endless) Next(dst *imageio.RGB) (*imageio.RGB, error) {
	e.n++
	w := 8
	if dst == nil {
		dst = &imageio.RGB{}
	}
	if cap(dst.Pix) < 3*w*6 {
		dst.Pix = make([]uint8, 3*w*6)
	}
	dst.W, dst.H, dst.Pix = w, 6, dst.Pix[:3*w*6]
	return dst, nil
}
func (e *endless) Close() error { return nil }

type endlessSource struct{}

func (endlessSource) Live() bool                               { return true }
func (endlessSource) String() string                           { return "endless" }
func (endlessSource) Open(ctx context.Context) (Stream, error) { return &endless{}, nil }

// TestRunBoundedLive: a live source faster than the classifier. Frames
// that wait are replaced by newer ones (counted stale, and dropped in
// the live Counters), and the classifier only ever sees the three buffers
// Run owns.
func TestRunBoundedLive(t *testing.T) {
	cl := &colourClassifier{delay: time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Stats)
	var counters Counters
	go func() {
		st, _ := Run(ctx, Config{Source: endlessSource{}, Classify: cl, Log: quiet(), Counters: &counters})
		done <- st
	}()
	for {
		cl.mu.Lock()
		n := cl.calls
		cl.mu.Unlock()
		if n >= 200 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	st := <-done
	if st.Stale == 0 || st.Frames < st.Classified+st.Stale {
		t.Fatalf("%+v: want stale frames", st)
	}
	if len(cl.buffers) > 3 {
		t.Fatalf("the classifier saw %d buffers, want at most 3", len(cl.buffers))
	}
	if c := counters.Snapshot(); c.Dropped != int64(st.Stale) || c.Read != int64(st.Frames) || c.Classified != int64(st.Classified) {
		t.Fatalf("counters %+v, stats %+v", c, st)
	}
}
