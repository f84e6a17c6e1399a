package frigate

import (
	"math"

	"github.com/flycl/flycl/reject"
)

// TryKeep returns the share of a known object's tries that the per-try
// threshold must keep for the vote to label at least the share
// objectKeep of the known objects it sees MinTries times or more:
// reject.Track's FrameKeep for MinTries tries and a quorum of
// ⌈Agreement·MinTries⌉, 1 − (1 − objectKeep)·(MinTries − quorum + 1)/MinTries
// (0.9667 for 95% with Frigate's 3 tries and 60%).
//
// The vote labels an object at its MinTries-th try when a quorum of those
// tries name one class; an object the vote never labels was therefore not
// labelled at that try, where at least MinTries − quorum + 1 of its first
// tries were rejected (for the score: tries that name another class are
// the accuracy's part, not the rejection's). By Markov's inequality that
// happens with probability at most 1 − objectKeep when each try is
// rejected with probability at most 1 − TryKeep, however alike the tries
// are (reject.Track.FrameKeep). Later tries only add chances to label.
// NaN for a share outside [0, 1].
func (r Rule) TryKeep(objectKeep float64) float64 {
	q := int(math.Ceil(r.Agreement*float64(r.MinTries) - 1e-9))
	return reject.Track{Tries: r.MinTries, Quorum: max(q, 1)}.FrameKeep(objectKeep)
}
