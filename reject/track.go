package reject

import (
	"fmt"
	"math"
)

// Track is the rule that decides an object seen in several frames (a
// tracked object's crops, or a zone's consecutive frames) from the
// frames' answers: the object is labelled with a class when at least
// Quorum of its first Tries frames are kept (their open-set value passes
// the track's per-frame threshold) and name that class, and no other
// class is named as often; otherwise it is not recognised.
//
// Its threshold is its own: a frame of a known object is kept with share
// FrameKeep(keep), above keep, so that the object is kept with share at
// least keep whatever the frames have in common (see FrameKeep). The
// per-frame threshold is then the split-conformal one of the same
// leave-one-out pool at that share (KeepThreshold(pool, FrameKeep(keep))),
// calibrated like the single-frame rule, not set by hand.
type Track struct {
	// Tries is the number of frames an object is decided on (the first
	// Tries; fewer decide nothing yet).
	Tries int
	// Quorum is the least number of those frames that must be kept and
	// name the class (1 ≤ Quorum ≤ Tries).
	Quorum int
}

// DefaultTrack decides an object on 5 frames, 3 of which must be kept
// and agree: a majority, as Frigate's own classifier asks for (at least 3
// tries, 60% of them), with a rejected frame counted against the class.
var DefaultTrack = Track{Tries: 5, Quorum: 3}

// Validate checks 1 ≤ Quorum ≤ Tries.
func (t Track) Validate() error {
	if t.Tries < 1 || t.Quorum < 1 || t.Quorum > t.Tries {
		return fmt.Errorf("reject: a track of %d frames with a quorum of %d: want 1 ≤ quorum ≤ frames", t.Tries, t.Quorum)
	}
	return nil
}

// FrameKeep returns the share of a known object's frames the per-frame
// threshold must keep for the object to be kept with share at least keep:
//
//	1 − (1 − keep)·(Tries − Quorum + 1)/Tries.
//
// An object is not kept only when at least Tries − Quorum + 1 of its
// Tries frames are rejected. Each frame of a known object is rejected
// with probability at most α_f = 1 − FrameKeep (the split-conformal
// guarantee of the threshold, for a frame exchangeable with the pooled
// leave-one-out samples), so the expected number of rejected frames is at
// most Tries·α_f, and by Markov's inequality the object is rejected with
// probability at most Tries·α_f/(Tries − Quorum + 1) = 1 − keep. Nothing
// is assumed about how the frames of one object depend on each other
// (they are far from independent: the same object, light and place), and
// the bound is tight: frames rejected all together in
// Tries − Quorum + 1 of them with probability 1 − keep, and none
// otherwise, reach it. Tries = Quorum = 1 is the single-frame rule
// (FrameKeep = keep). It returns keep unchanged for a Track that does
// not validate, and NaN for a keep outside [0, 1].
func (t Track) FrameKeep(keep float64) float64 {
	if math.IsNaN(keep) || keep < 0 || keep > 1 {
		return math.NaN()
	}
	if t.Validate() != nil {
		return keep
	}
	return 1 - (1-keep)*float64(t.Tries-t.Quorum+1)/float64(t.Tries)
}

// DecideTrack returns the class that the frames' answers (none for a
// frame that is rejected or names a class that is never an answer)
// label the object with under t, and how many of the first t.Tries
// frames name it; none when fewer than t.Tries answers are given, when no
// class is named by t.Quorum of them, or when two classes are named
// equally often.
func DecideTrack[T comparable](t Track, answers []T, none T) (T, int) {
	if t.Validate() != nil || len(answers) < t.Tries {
		return none, 0
	}
	count := make(map[T]int, t.Tries)
	best, bestN, tie := none, 0, false
	for _, a := range answers[:t.Tries] {
		if a == none {
			continue
		}
		count[a]++
		switch c := count[a]; {
		case c > bestN:
			best, bestN, tie = a, c, false
		case c == bestN && a != best:
			tie = true
		}
	}
	if tie || bestN < t.Quorum {
		return none, 0
	}
	return best, bestN
}
