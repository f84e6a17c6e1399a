package watch

import (
	"fmt"
	"slices"
	"strings"
)

// ZoneModelError is the error of a NAME=FILE zone-model spec that is
// malformed, names no zone, or gives a zone a second model.
type ZoneModelError struct {
	Spec   string // the spec as given
	Reason string
}

func (e *ZoneModelError) Error() string { return fmt.Sprintf("%q: %s", e.Spec, e.Reason) }

// ParseZoneModels reads NAME=FILE specs: the model file of each zone
// named, one of zones, at most once. The result maps a zone's name to its
// file; a zone without a spec is classified by the camera's own model.
func ParseZoneModels(specs []string, zones []Zone) (map[string]string, error) {
	out := map[string]string{}
	for _, s := range specs {
		name, file, ok := strings.Cut(s, "=")
		switch {
		case !ok || name == "" || file == "":
			return nil, &ZoneModelError{s, "want NAME=FILE (a zone of --zone and its model file)"}
		case !slices.ContainsFunc(zones, func(z Zone) bool { return z.Name == name }):
			return nil, &ZoneModelError{s, fmt.Sprintf("no --zone is named %q", name)}
		case out[name] != "":
			return nil, &ZoneModelError{s, fmt.Sprintf("zone %q has a model already (%s)", name, out[name])}
		}
		out[name] = file
	}
	return out, nil
}
