package inbox

import (
	"log/slog"
	"sync"
	"sync/atomic"
)

// Queue writes entries to an inbox on a goroutine of its own, from a
// bounded queue: an entry that finds the queue full is dropped (counted),
// never delaying its sender (a video stream, a Frigate bridge). Set Inbox
// before the first Put; call Close once, after the last Put.
type Queue struct {
	Inbox *Inbox
	Size  int          // entries waiting to be written at most (≤ 0: 8)
	Log   *slog.Logger // where a refused entry is logged (nil: slog.Default())
	What  string       // what an entry is, in the log ("frame", "crop"; "": "item")

	once    sync.Once
	q       chan Entry
	done    chan struct{}
	kept    atomic.Int64
	dropped atomic.Int64
	failed  atomic.Int64
}

// QueueStats counts what a Queue did.
type QueueStats struct {
	Kept    int // items written to the inbox
	Dropped int // entries not kept because the queue was full
	Failed  int // items the inbox refused (logged)
}

func (w *Queue) start() {
	w.once.Do(func() {
		if w.Log == nil {
			w.Log = slog.Default()
		}
		if w.What == "" {
			w.What = "item"
		}
		size := w.Size
		if size <= 0 {
			size = 8
		}
		w.q = make(chan Entry, size)
		w.done = make(chan struct{})
		go w.run()
	})
}

func (w *Queue) run() {
	defer close(w.done)
	for e := range w.q {
		it, _, err := w.Inbox.Add(e)
		if err != nil {
			w.failed.Add(1)
			w.Log.Warn("inbox: cannot keep a "+w.What, "camera", e.Camera, "zone", e.Zone, "err", err)
			continue
		}
		w.kept.Add(1)
		w.Log.Debug("inbox: kept a "+w.What, "id", it.ID, "camera", e.Camera, "zone", e.Zone, "guess", it.Guess, "why", it.Why)
	}
}

// Put queues e and reports true, or drops it (counted) when the queue is
// full.
func (w *Queue) Put(e Entry) bool {
	w.start()
	select {
	case w.q <- e:
		return true
	default:
		w.dropped.Add(1)
		return false
	}
}

// Stats returns the counts so far.
func (w *Queue) Stats() QueueStats {
	return QueueStats{Kept: int(w.kept.Load()), Dropped: int(w.dropped.Load()), Failed: int(w.failed.Load())}
}

// Close writes the entries still queued and stops the Queue's goroutine.
// It does not close the inbox.
func (w *Queue) Close() {
	w.start()
	close(w.q)
	<-w.done
}
