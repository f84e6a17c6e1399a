package cameras

import (
	"fmt"
	"strconv"

	"github.com/flycl/flycl/reject"
)

// ObjectKeepChoice returns the rejection choice (keep:SHARE) whose
// per-frame threshold keeps at least the share objectKeep of the known
// objects a zone's state confirms, when a state needs debounce frames in
// a row: all debounce frames must pass, so each must keep
// 1 − (1 − objectKeep)/debounce of the known photos (reject.Track with a
// quorum of all its frames: the union bound, whatever the frames share).
// A share outside (0, 1] or a debounce below 1 is an error.
func ObjectKeepChoice(objectKeep float64, debounce int) (string, error) {
	if !(objectKeep > 0 && objectKeep <= 1) {
		return "", fmt.Errorf("object keep %g: want a share in (0, 1]", objectKeep)
	}
	t := reject.Track{Tries: max(debounce, 1), Quorum: max(debounce, 1)}
	return reject.KeepPrefix + strconv.FormatFloat(t.FrameKeep(objectKeep), 'g', 6, 64), nil
}
