package watch

import (
	"sync/atomic"
	"time"
)

// Counters are a Run's counts as it goes, safe to read from another
// goroutine while it runs (for metrics; Stats are the same counts at the
// end). Run adds to the Counters of Config.Counters; the methods that add
// do nothing on a nil *Counters.
type Counters struct {
	read, classified, dropped, reconnects, events atomic.Int64
	last                                          atomic.Int64 // Unix nanoseconds of the last frame read (0: none)
}

// CountersSnapshot is a reading of Counters.
type CountersSnapshot struct {
	Read       int64 // frames read from the source
	Classified int64 // frames classified (each zone of a frame together: one)
	Dropped    int64 // frames of a live source skipped because a newer one arrived
	Reconnects int64 // reconnections of a live source (failed attempts included)
	Events     int64
	// LastFrame is when the last frame was read (zero before the first).
	LastFrame time.Time
}

// Snapshot reads the counters.
func (c *Counters) Snapshot() CountersSnapshot {
	s := CountersSnapshot{Read: c.read.Load(), Classified: c.classified.Load(), Dropped: c.dropped.Load(),
		Reconnects: c.reconnects.Load(), Events: c.events.Load()}
	if n := c.last.Load(); n != 0 {
		s.LastFrame = time.Unix(0, n)
	}
	return s
}

func (c *Counters) frameRead(at time.Time) {
	if c != nil {
		c.read.Add(1)
		c.last.Store(at.UnixNano())
	}
}

func add(c *Counters, f func(*Counters) *atomic.Int64) {
	if c != nil {
		f(c).Add(1)
	}
}

func (c *Counters) frameClassified() {
	add(c, func(c *Counters) *atomic.Int64 { return &c.classified })
}
func (c *Counters) frameDropped() { add(c, func(c *Counters) *atomic.Int64 { return &c.dropped }) }
func (c *Counters) reconnect()    { add(c, func(c *Counters) *atomic.Int64 { return &c.reconnects }) }
func (c *Counters) event()        { add(c, func(c *Counters) *atomic.Int64 { return &c.events }) }
