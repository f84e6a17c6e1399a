package watch

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"sync"

	"github.com/flycl/flycl/app/inbox"
	"github.com/flycl/flycl/vision/imageio"
)

// Keeper keeps the frames (or zone crops) a stream's model is unsure of
// in a labelling inbox (package inbox), the one flycl serve --inbox
// shows on its page and learns from: those answered unknown, those the
// Policy finds doubtful (a low calibrated probability, or close scores),
// and, with Changes, the frame that confirmed a change of the debounced
// answer. Each item records the camera and the zone, the model's
// version, its guess and top scores, the feature vector (what a label
// learns) and the image, downscaled by the inbox.
//
// At most one item per zone is kept in every Every frames, so that a
// long doubtful scene does not push everything else out of the inbox (a
// change of state is always kept); the inbox itself is bounded in items
// and bytes and drops its oldest. The writes happen on a goroutine of
// the Keeper's, from a queue of Queue frames: a frame that finds the
// queue full is dropped (counted), never delaying the stream.
type Keeper struct {
	Inbox  *inbox.Inbox
	Policy inbox.Policy
	// Camera names the stream in the items (flycl watch --camera).
	Camera string
	// Changes also keeps the frame that confirmed each change of the
	// debounced answer.
	Changes bool
	Every   int // frames between two kept ones of a zone at least (≤ 0: 1)
	Queue   int // frames waiting to be written at most (≤ 0: 8)
	Log     *slog.Logger

	once sync.Once
	w    inbox.Queue
	last map[string]int // by zone: the frame last kept
}

// KeeperStats counts what a Keeper did (Dropped: frames not kept because
// the queue was full).
type KeeperStats = inbox.QueueStats

// Stats returns the counts so far.
func (k *Keeper) Stats() KeeperStats { return k.w.Stats() }

func (k *Keeper) start() {
	k.once.Do(func() {
		k.w = inbox.Queue{Inbox: k.Inbox, Size: k.Queue, Log: k.Log, What: "frame"}
		k.last = map[string]int{}
	})
}

// Close writes the frames still queued and stops the Keeper's goroutine,
// once Run has returned; call it once. It does not close the inbox.
func (k *Keeper) Close() {
	k.start()
	k.w.Close()
}

// observe decides whether to keep frame's img (zone's crop, "" for the
// whole frame) predicted p, with features x; changed tells that the frame
// confirmed a change of the debounced answer. Run calls it from its one
// goroutine.
func (k *Keeper) observe(frame int, zone string, img *imageio.RGB, p Prediction, x []float32, changed bool) {
	k.start()
	why, ok := k.why(p, changed)
	if !ok || len(x) == 0 {
		return
	}
	if last, seen := k.last[zone]; seen && !(changed && k.Changes) && frame-last < max(k.Every, 1) {
		return
	}
	e := inbox.Entry{ModelVersion: p.ModelVersion, Guess: p.Answer, Unknown: p.Unknown, Probability: p.Probability, Why: why,
		Features: append([]float32(nil), x...), Camera: k.Camera, Zone: zone}
	if len(p.Top) > 0 {
		e.Guess = p.Top[0].Name
	}
	for _, t := range p.Top {
		e.Top = append(e.Top, inbox.Score{Class: t.Name, Score: t.Score})
	}
	// the frame buffers are reused: the inbox gets a copy
	e.Image = &imageio.RGB{W: img.W, H: img.H, Pix: append([]uint8(nil), img.Pix[:3*img.W*img.H]...)}
	if k.w.Put(e) {
		k.last[zone] = frame
	}
}

// why says whether to keep a prediction, and why.
func (k *Keeper) why(p Prediction, changed bool) (inbox.Reason, bool) {
	row := make([]float32, len(p.Top))
	for i, t := range p.Top {
		row[i] = t.Score
	}
	prob := 0.0
	if p.Probability != nil {
		prob = *p.Probability
	}
	if why, ok := k.Policy.Keep(p.Unknown, prob, p.Probability != nil, row); ok {
		return why, true
	}
	if changed && k.Changes {
		return inbox.Change, true
	}
	return "", false
}

// checkInbox checks that an inbox has the features it keeps.
func (c *Config) checkInbox() error {
	if _, ok := c.Classify.(FeatureClassifier); c.Inbox != nil && !ok {
		return fmt.Errorf("watch: an inbox keeps the features a label learns: its classifier must be a FeatureClassifier (ModelClassifier, Reloading)")
	}
	return nil
}

// pinned is one of Run's distinct classifiers and what it pinned for
// the frame being classified.
type pinned struct {
	src, cur Classifier
}

// pinSlot returns c's index in r.pins, adding it when it is new: zones
// given one classifier value share its pin.
func (r *runner) pinSlot(c Classifier) int {
	if c != nil && reflect.TypeOf(c).Comparable() {
		for i, p := range r.pins {
			if reflect.TypeOf(p.src) == reflect.TypeOf(c) && p.src == c {
				return i
			}
		}
	}
	r.pins = append(r.pins, pinned{src: c, cur: c})
	return len(r.pins) - 1
}

// pin takes the classifiers of the next frame: each distinct one, or
// what it pins (a Reloading's model of the moment), once for all the
// zones that share it.
func (r *runner) pin() {
	for i := range r.pins {
		p := &r.pins[i]
		p.cur = p.src
		if pn, ok := p.src.(Pinner); ok {
			p.cur = pn.Pin()
		}
	}
}

// predict classifies img with cl, with its features when an inbox keeps
// them.
func (r *runner) predict(ctx context.Context, cl Classifier, inbox bool, img *imageio.RGB) (Prediction, []float32, error) {
	if fc, ok := cl.(FeatureClassifier); ok && inbox && r.cfg.Inbox != nil {
		return fc.ClassifyFeatures(ctx, img)
	}
	p, err := cl.Classify(ctx, img)
	return p, nil, err
}

// keep hands a prediction to Config.Inbox.
func (r *runner) keep(frame int, zone string, img *imageio.RGB, p Prediction, x []float32, changed bool) {
	if r.cfg.Inbox != nil {
		r.cfg.Inbox.observe(frame, zone, img, p, x, changed)
	}
}
