package teach

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/flycl/flycl/app/deploy"
	"github.com/flycl/flycl/format/modelfile"
)

// ErrNoSamples is Compute's error for a model whose journal holds none of
// the samples of its classes (no journal, or one started after they were
// learned): the report needs them.
var ErrNoSamples = errors.New("teach: the model's journal holds none of its samples (keep a journal: flycl serve does unless --checkpoint-every 0; flycl learn --journal)")

// Options bound a Report.
type Options struct {
	// Hardest is how many of the worst samples the report lists (≤ 0:
	// DefaultHardest).
	Hardest int
	// MaxSamples bounds the samples scored, spread evenly over each
	// class's (≤ 0: DefaultMaxSamples): the cost grows as samples × m².
	MaxSamples int
}

// Defaults of Options.
const (
	DefaultHardest    = 12
	DefaultMaxSamples = 2000
)

// Advice thresholds: a class needs more photos when it has fewer than
// MinSamples, or its leave-one-out accuracy is below MinAccuracy, or more
// than MaxRejected of its samples would be answered unknown.
const (
	MinSamples  = 5
	MinAccuracy = 0.9
	MaxRejected = 0.2
)

// Report is a model's "have I taught it enough?".
type Report struct {
	// Version is the model version reported on.
	Version uint64 `json:"version"`
	// Samples is the number of samples scored; Accuracy and Rejected are
	// their leave-one-out accuracy and rejected share over all classes.
	Samples  int     `json:"samples"`
	Accuracy float64 `json:"accuracy"`
	Rejected float64 `json:"rejected"`
	// Rejection says whether the model rejects anything (else Rejected
	// is 0).
	Rejection bool    `json:"rejection"`
	Classes   []Class `json:"classes"`
	// Confusions counts, for each pair of classes, the samples of one
	// answered as the other when left out; most first.
	Confusions []Confusion `json:"confusions"`
	// Hardest are the samples the model gets most wrong when left out:
	// the smallest margin of their class's score over the best other
	// class's, first.
	Hardest []Sample `json:"hardest"`
}

// Class is one class's part of a Report.
type Class struct {
	Name string `json:"name"`
	// Samples is how many the model learned; Scored how many of them the
	// journal holds and were scored (fewer when the journal does not
	// hold them all: merged statistics, a journal started later).
	Samples int `json:"samples"`
	Scored  int `json:"scored"`
	// Accuracy is the share of the scored samples whose best class, left
	// out, is their own; Rejected the share the rejection would answer
	// unknown.
	Accuracy float64 `json:"accuracy"`
	Rejected float64 `json:"rejected"`
	// NeedsMore says that the class needs more photos (MinSamples,
	// MinAccuracy, MaxRejected).
	NeedsMore bool `json:"needs_more"`
}

// Confusion counts the samples of Class answered As when left out.
type Confusion struct {
	Class string `json:"class"`
	As    string `json:"as"`
	Count int    `json:"count"`
}

// Sample is one scored sample.
type Sample struct {
	Class string `json:"class"`
	// Answer is the best class left out; Score its own class's score and
	// Margin that less the best other class's (negative: answered wrong).
	Answer   string  `json:"answer"`
	Score    float32 `json:"score"`
	Margin   float32 `json:"margin"`
	Rejected bool    `json:"rejected"`
	// Learn is the model version the sample's learn made, Time when, and
	// Row its row in that learn.
	Learn uint64    `json:"learn"`
	Time  time.Time `json:"time"`
	Row   int       `json:"row"`
}

// sample is a journal sample: its features and where it came from.
type sample struct {
	class string
	learn uint64
	time  time.Time
	row   int
	x     []float32
}

// journalSamples returns the samples of hist's learns that the model's
// statistics still hold, for the classes it has: a learn undone, or a
// class forgotten after it, does not count.
func journalSamples(hist []*modelfile.JournalEntry, classes map[string]bool) []sample {
	undone := map[uint64]bool{}
	for _, e := range hist {
		if e.Op == "unlearn" {
			undone[e.Undoes] = true
		}
	}
	var out []sample
	for _, e := range hist {
		switch {
		case e.Op == "forget" && len(e.Names) == 1:
			out = slices.DeleteFunc(out, func(s sample) bool { return s.class == e.Names[0] })
		case e.Op == "learn" && !undone[e.Version] && e.D > 0 && len(e.X) == len(e.Names)*e.D:
			for i, name := range e.Names {
				if classes[name] {
					out = append(out, sample{class: name, learn: e.Version, time: e.Time, row: i, x: e.X[i*e.D : (i+1)*e.D]})
				}
			}
		}
	}
	return out
}

// Compute reports on the model m from its journal's history hist
// (store.Store.History). It factors G + λI when m has no factor at its λ:
// like a learn, it must not run concurrently with m's other methods.
func Compute(ctx context.Context, m *deploy.Model, hist []*modelfile.JournalEntry, opt Options) (*Report, error) {
	names := m.Model.Classes().Names()
	if len(names) == 0 {
		return nil, fmt.Errorf("teach: the model has no classes yet")
	}
	hardest, maxN := cmp.Or(max(opt.Hardest, 0), DefaultHardest), cmp.Or(max(opt.MaxSamples, 0), DefaultMaxSamples)
	classes := make(map[string]bool, len(names))
	col := make(map[string]int, len(names))
	for i, n := range names {
		classes[n], col[n] = true, i
	}
	all := journalSamples(hist, classes)
	if len(all) == 0 {
		return nil, ErrNoSamples
	}
	// every sample, not the first only: the journal is outside bytes, and
	// learns of other lengths whose rows added up would be scored
	// misaligned
	for _, s := range all {
		if d := m.Model.InputDim(); len(s.x) != d {
			return nil, fmt.Errorf("teach: the journal's learn of version %d has samples of %d features, the model %d", s.learn, len(s.x), d)
		}
	}
	// at most maxN, spread evenly over each class's samples
	byClass := map[string][]sample{}
	for _, s := range all {
		byClass[s.class] = append(byClass[s.class], s)
	}
	per := max(maxN/len(names), 1)
	var use []sample
	for _, n := range names {
		ss := byClass[n]
		k := min(len(ss), per)
		for i := range k {
			use = append(use, ss[i*len(ss)/k])
		}
	}
	rep := &Report{Version: m.Model.Version(), Rejection: m.Model.Rejection().Enabled(), Confusions: []Confusion{}, Hardest: []Sample{}}
	counts := m.Model.Classes().Counts()
	rep.Classes = make([]Class, len(names))
	for i, n := range names {
		rep.Classes[i] = Class{Name: n, Samples: counts[i]}
	}
	if len(use) > 0 {
		nc, d := len(names), m.Model.InputDim()
		x, labels := make([]float32, 0, len(use)*d), make([]int, len(use))
		for i, s := range use {
			x = append(x, s.x...)
			labels[i], _ = m.Model.Classes().LabelOf(s.class)
		}
		loo, cos, err := m.Model.LeaveOneOutScores(ctx, x, labels)
		if err != nil {
			return nil, fmt.Errorf("teach: %w", err)
		}
		rej := m.Model.Rejection()
		conf := map[[2]int]int{}
		var scored []Sample
		for i, s := range use {
			row := loo[i*nc : (i+1)*nc]
			own := col[s.class]
			best, other := 0, -1
			for j, v := range row {
				if v > row[best] {
					best = j
				}
				if j != own && (other < 0 || v > row[other]) {
					other = j
				}
			}
			margin := row[own]
			if other >= 0 {
				margin -= row[other]
			}
			right := margin > 0 || nc == 1
			if !right && best == own { // a tie is not right: the other class answers
				best = other
			}
			smp := Sample{Class: s.class, Answer: names[best], Score: row[own], Margin: margin, Rejected: rej.Reject(row, cos[i]),
				Learn: s.learn, Time: s.time, Row: s.row}
			c := &rep.Classes[own]
			c.Scored++
			rep.Samples++
			if right {
				c.Accuracy++
				rep.Accuracy++
			} else {
				conf[[2]int{own, best}]++
			}
			if smp.Rejected {
				c.Rejected++
				rep.Rejected++
			}
			scored = append(scored, smp)
		}
		for k, v := range conf {
			rep.Confusions = append(rep.Confusions, Confusion{Class: names[k[0]], As: names[k[1]], Count: v})
		}
		slices.SortFunc(rep.Confusions, func(a, b Confusion) int {
			return cmp.Or(-cmp.Compare(a.Count, b.Count), cmp.Compare(a.Class, b.Class), cmp.Compare(a.As, b.As))
		})
		slices.SortStableFunc(scored, func(a, b Sample) int { return cmp.Compare(a.Margin, b.Margin) })
		rep.Hardest = scored[:min(hardest, len(scored))]
		rep.Accuracy /= float64(rep.Samples)
		rep.Rejected /= float64(rep.Samples)
	}
	for i := range rep.Classes {
		c := &rep.Classes[i]
		if c.Samples < 0 { // a model file that did not count them
			c.Samples = c.Scored
		}
		if c.Scored > 0 {
			c.Accuracy /= float64(c.Scored)
			c.Rejected /= float64(c.Scored)
		}
		c.NeedsMore = c.Samples < MinSamples || c.Scored == 0 || c.Accuracy < MinAccuracy || c.Rejected > MaxRejected
	}
	return rep, nil
}
