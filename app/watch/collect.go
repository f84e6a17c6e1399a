package watch

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/flycl/flycl/vision/imageio"
)

// Timed is a Source whose frames have a known time in the stream: a file
// sampled at a fixed rate. Run gives a Collector that time, so that what
// it saves from a file does not depend on how fast it was read.
type Timed interface {
	// FrameTime returns frame's time from the start of the stream, and
	// false when it is not known (a live source: its frames' arrival
	// time is used).
	FrameTime(frame int) (time.Duration, bool)
}

// FrameTime is frame/FPS for a file read at FPS frames per second; a live
// source's frames, or a file read at its own rate (FPS 0), have none.
func (f *FFmpeg) FrameTime(frame int) (time.Duration, bool) {
	if f.Live() || f.FPS <= 0 {
		return 0, false
	}
	return time.Duration(float64(frame) / f.FPS * float64(time.Second)), true
}

// Collector saves frames (or each zone's crop, in a folder named after the
// zone) as JPEG files at most once every Every of the frames' time,
// whatever the classifier answers: material for someone to sort into
// class folders and teach. It stops saving after Max files (it never
// deletes a file: they may be being sorted).
//
// A frame's time is its time in the stream for a Timed source (a file
// read at a fixed rate), its arrival time otherwise. File names sort by
// that time: SSSSSSSSS.mmms-frame-N.jpg (seconds from the stream's start)
// for a Timed source, YYYYMMDDTHHMMSS.mmmZ-frame-N.jpg (UTC) otherwise.
type Collector struct {
	Dir   string
	Every time.Duration // between two saved frames of a zone at least (≤ 0: 10 s)
	Max   int           // files at most, all zones together (≤ 0: 500)
	saved int
	last  map[string]frameTime // by zone ("" without zones)
}

// frameTime is a frame's time: in the stream when timed, else its arrival.
type frameTime struct {
	stream time.Duration
	at     time.Time
	timed  bool
}

func (t frameTime) sub(u frameTime) time.Duration {
	if t.timed && u.timed {
		return t.stream - u.stream
	}
	return t.at.Sub(u.at)
}

func (t frameTime) name(frame int) string {
	if t.timed {
		ms := t.stream.Milliseconds()
		return fmt.Sprintf("%09d.%03ds-frame-%09d.jpg", ms/1000, ms%1000, frame)
	}
	return t.at.UTC().Format("20060102T150405.000Z") + fmt.Sprintf("-frame-%09d.jpg", frame)
}

// Saved returns how many files it has saved.
func (c *Collector) Saved() int { return c.saved }

// Full reports whether it has saved Max files.
func (c *Collector) Full() bool { return c.saved >= cmpOrInt(c.Max, 500) }

// maybe saves img (frame, or zone's crop of it) when the zone's last
// saved frame is at least Every older and Max allows; it returns the file
// written ("" if none).
func (c *Collector) maybe(zone string, frame int, t frameTime, img *imageio.RGB) (string, error) {
	if c.Full() {
		return "", nil
	}
	if c.last == nil {
		c.last = map[string]frameTime{}
	}
	if last, ok := c.last[zone]; ok && t.sub(last) < cmpOr(c.Every, 10*time.Second) {
		return "", nil
	}
	path := filepath.Join(c.Dir, zone, t.name(frame))
	if err := saveJPEG(path, img); err != nil {
		return "", fmt.Errorf("watch: collect: %w", err)
	}
	c.saved++
	c.last[zone] = t
	return path, nil
}

func cmpOrInt(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}
