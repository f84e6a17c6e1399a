package answer

import "strings"

// IsReserved reports whether class is a reserved class name, one that is
// never an answer: an input whose top class is reserved is answered
// UnknownAnswer ("not recognised"), as one the rejection rejects (Decide:
// flycl predict, the server, flycl watch and flycl frigate alike).
// "background" is a camera's empty scene (the frames --collect keeps when
// nothing is there, sorted into a folder background/), so that the scene
// itself is never one of the classes; "none" is what a user gives as
// "none of these" (Frigate's own none class), photos of things the model
// must not name. Case is ignored ("None" is reserved too). The video
// benchmark (flycl-lab bench video, docs/RESULTS.md) measures what each does.
func IsReserved(class string) bool {
	switch strings.ToLower(class) {
	case "background", "none":
		return true
	}
	return false
}
