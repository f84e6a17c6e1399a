package frigate

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/flycl/flycl/app/inbox"
)

// Keeper keeps tries in a labelling inbox (package inbox, the folder
// flycl serve --inbox shows and learns from): the tries the model was
// unsure of (answered unknown, or doubtful by the Policy, as flycl watch
// --inbox keeps frames) and one in every Sample of the others, so that
// the crops a Frigate user labels are exactly what the live classifier
// sees. An item records the camera and, as its zone, Frigate's label
// (a crop of a "bird" object is kept under zone "bird"). Writes happen
// on the Keeper's goroutine from a queue of Queue tries; a try that finds
// the queue full is dropped and counted.
type Keeper struct {
	Inbox  *inbox.Inbox
	Policy inbox.Policy
	// Sample keeps one in every Sample confident tries (0: none).
	Sample int
	Queue  int // tries waiting to be written at most (≤ 0: 8)
	Log    *slog.Logger

	once      sync.Once
	w         inbox.Queue
	confident atomic.Int64
}

// KeeperStats counts what a Keeper did.
type KeeperStats = inbox.QueueStats

// Stats returns the counts so far.
func (k *Keeper) Stats() KeeperStats { return k.w.Stats() }

func (k *Keeper) start() {
	k.once.Do(func() { k.w = inbox.Queue{Inbox: k.Inbox, Size: k.Queue, Log: k.Log, What: "crop"} })
}

// Keep is a Config.Keep: it queues t when it is to be kept.
func (k *Keeper) Keep(t Try) {
	k.start()
	p := t.Prediction
	if len(t.Features) == 0 {
		return
	}
	row := make([]float32, len(p.Top))
	for i, s := range p.Top {
		row[i] = s.Score
	}
	prob := 0.0
	if p.Probability != nil {
		prob = *p.Probability
	}
	why, ok := k.Policy.Keep(p.Unknown, prob, p.Probability != nil, row)
	if !ok {
		if k.Sample <= 0 || (k.confident.Add(1)-1)%int64(k.Sample) != 0 {
			return
		}
		why = inbox.Sample
	}
	e := inbox.Entry{ModelVersion: p.ModelVersion, Guess: p.Answer, Unknown: p.Unknown, Probability: p.Probability, Why: why,
		Features: t.Features, Camera: t.Camera, Zone: t.Label, Image: t.Image}
	if len(p.Top) > 0 {
		e.Guess = p.Top[0].Name
	}
	for _, s := range p.Top {
		e.Top = append(e.Top, inbox.Score{Class: s.Name, Score: s.Score})
	}
	k.w.Put(e)
}

// Close writes the tries still queued and stops the Keeper's goroutine,
// once the Labeller's Run has returned. It does not close the inbox.
func (k *Keeper) Close() {
	k.start()
	k.w.Close()
}
