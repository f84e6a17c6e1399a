package watch

import "strings"

// ReservedClasses are the class names that are never an answer: a frame
// whose top class is one of them is answered UnknownAnswer ("not
// recognised"), as one the rejection rejects. "background" is a camera's
// empty scene (the frames --collect keeps when nothing is there, sorted
// into a folder background/), so that the scene itself is never one of
// the classes; "none" is what a user gives as "none of these" (Frigate's
// own none class), photos of things the model must not name. The video
// benchmark (flycl bench video, docs/WATCH.md) measures what each does.
var reservedClasses = [...]string{"background", "none"}

// IsReserved reports whether class is a reserved class name (case is
// ignored: "None" is reserved too).
func IsReserved(class string) bool {
	for _, r := range reservedClasses {
		if strings.EqualFold(class, r) {
			return true
		}
	}
	return false
}
