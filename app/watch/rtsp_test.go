package watch

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/flycl/flycl/internal/rtsptest"
)

// colourFrames returns n JPEG frames of each colour in turn.
func colourFrames(t *testing.T, n int, names ...string) [][]byte {
	var fs [][]byte
	for _, c := range names {
		f := jpegOf(t, c, 64, 48)
		for range n {
			fs = append(fs, f)
		}
	}
	return fs
}

// eventStop is an EventSink that records events and calls stop when
// until says so.
type eventStop struct {
	mu     sync.Mutex
	events []Event
	until  func([]Event) bool
	stop   func()
}

func (e *eventStop) Send(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, ev)
	if e.until(e.events) {
		e.stop()
	}
}

func (e *eventStop) get() []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.events)
}

// successor reports whether b follows a in the cycle.
func successor(cycle []string, a, b string) bool {
	i := slices.Index(cycle, a)
	return i >= 0 && cycle[(i+1)%len(cycle)] == b
}

// TestRTSP: a real RTSP server (GStreamer's, on 127.0.0.1) serves a loop
// of red, green and blue frames (5 of each, 10 frames/s) as Motion JPEG
// and as H.264, read by ffmpeg over RTSP/TCP; every frame classified is
// one of the three colours at the server's size, and the events follow
// the loop's order (red → green → blue → red …) for two loops at least.
func TestRTSP(t *testing.T) {
	ff := needFFmpeg(t)
	cycle := []string{"red", "green", "blue"}
	for _, codec := range []string{rtsptest.JPEG, rtsptest.H264} {
		t.Run(codec, func(t *testing.T) {
			rtsptest.Need(t, codec)
			srv := rtsptest.Start(t, rtsptest.Options{Frames: colourFrames(t, 5, cycle...), Codec: codec})
			src := &FFmpeg{Path: ff, Input: srv.URL, InputArgs: []string{"-rtsp_transport", "tcp"}}
			if !src.Live() {
				t.Fatal("an RTSP stream is not live")
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			sink := &eventStop{until: func(evs []Event) bool { return len(evs) >= 7 }, stop: cancel}
			cl := &colourClassifier{}
			var out syncBuffer
			var counters Counters
			st, err := Run(ctx, Config{Source: src, Classify: cl, Out: &out, Events: sink, Debounce: 2, Log: quiet(),
				EveryFrame: true, Stall: 10 * time.Second, Counters: &counters, Camera: "door"})
			if err != nil {
				t.Fatal(err)
			}
			evs := sink.get()
			if len(evs) < 7 {
				t.Fatalf("%d events in a minute, want 7: %+v (%+v)", len(evs), evs, st)
			}
			for i, e := range evs[1:] {
				if e.Previous != evs[i].Class || !successor(cycle, e.Previous, e.Class) || e.Camera != "door" {
					t.Fatalf("event %d: %s → %s (camera %q), not the loop's order: %+v", i+1, e.Previous, e.Class, e.Camera, evs)
				}
			}
			frames, _ := lines(t, []byte(out.String()))
			for _, f := range frames {
				if !slices.Contains(cycle, f.Answer) || f.Camera != "door" {
					t.Fatalf("frame %d answered %q (camera %q), not one of the served colours", f.Frame, f.Answer, f.Camera)
				}
			}
			for _, s := range cl.sizes {
				if s != [2]int{64, 48} {
					t.Fatalf("a frame of %d×%d, want 64×48", s[0], s[1])
				}
			}
			c := counters.Snapshot()
			if c.Read != int64(st.Frames) || c.Classified != int64(st.Classified) || c.Events != int64(st.Events) || c.Reconnects != 0 ||
				c.Dropped != 0 || time.Since(c.LastFrame) > time.Minute {
				t.Fatalf("counters %+v, stats %+v", c, st)
			}
		})
	}
}

// TestRTSPServerRestart: the RTSP server is killed while it serves red
// and green and, once Run has seen the stream end and failed to
// reconnect, another one comes up on the same port serving blue and
// white. Run reconnects with backoff (failing while
// nothing listens) and goes on with the new server's frames: the answers
// are red and green, then blue and white, never mixed, and the
// reconnections are counted as they happen.
func TestRTSPServerRestart(t *testing.T) {
	ff := needFFmpeg(t)
	rtsptest.Need(t, rtsptest.H264)
	first, second := []string{"red", "green"}, []string{"blue", "white"}
	srv := rtsptest.Start(t, rtsptest.Options{Frames: colourFrames(t, 5, first...), Codec: rtsptest.H264})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var counters Counters
	type restart struct {
		reconnects int64
		err        error
	}
	restarted := make(chan restart, 1)
	next := colourFrames(t, 5, second...)
	sink := &eventStop{stop: cancel}
	sink.until = func(evs []Event) bool {
		if len(evs) == 3 { // the first server's frames flow: kill it, start another a second later
			go func() {
				srv.Stop()
				// wait for the stream's end and a refused attempt
				// while nothing listens (at most 30 s)
				for end := time.Now().Add(30 * time.Second); counters.Snapshot().Reconnects < 2 && time.Now().Before(end); {
					time.Sleep(20 * time.Millisecond)
				}
				rc := counters.Snapshot().Reconnects
				_, err := rtsptest.Launch(t, rtsptest.Options{Frames: next, Codec: rtsptest.H264, Port: srv.Port})
				restarted <- restart{rc, err}
			}()
		}
		return slices.Contains(second, evs[len(evs)-1].Class) && len(evs) >= 6
	}
	var out syncBuffer
	src := &FFmpeg{Path: ff, Input: srv.URL, InputArgs: []string{"-rtsp_transport", "tcp"}}
	st, err := Run(ctx, Config{Source: src, Classify: &colourClassifier{}, Out: &out, Events: sink, Debounce: 2, Log: quiet(),
		EveryFrame: true, Stall: 10 * time.Second, Backoff: 100 * time.Millisecond, MaxBackoff: 400 * time.Millisecond, Counters: &counters})
	if err != nil {
		t.Fatal(err)
	}
	var before int64
	select {
	case r := <-restarted:
		if r.err != nil {
			t.Fatal(r.err)
		}
		before = r.reconnects
	default:
		t.Fatal("the second server was not started")
	}
	evs := sink.get()
	if len(evs) < 6 || !slices.Contains(second, evs[len(evs)-1].Class) {
		t.Fatalf("events %+v (%+v): the second server's frames never came", evs, st)
	}
	frames, _ := lines(t, []byte(out.String()))
	as := answers(frames)
	k := slices.IndexFunc(as, func(a string) bool { return slices.Contains(second, a) })
	if k <= 0 || slices.ContainsFunc(as[:k], func(a string) bool { return !slices.Contains(first, a) }) ||
		slices.ContainsFunc(as[k:], func(a string) bool { return !slices.Contains(second, a) }) {
		t.Fatalf("answers %v: want the first server's colours, then the second's", as)
	}
	// the stream's end and at least one refused attempt were counted
	// (live) before the new server came up
	if before < 2 || int64(st.Reconnects) < before || counters.Snapshot().Reconnects != int64(st.Reconnects) {
		t.Fatalf("%d reconnections while the server was down, %d in all (counters %+v)", before, st.Reconnects, counters.Snapshot())
	}
}
