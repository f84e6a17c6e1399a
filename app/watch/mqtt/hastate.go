package mqtt

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"
)

// NotRecognized is the state published when the model's rejection says
// the frame shows none of its classes. It is not "unknown": Home
// Assistant's state machine uses "unknown" (homeassistant/const.py
// STATE_UNKNOWN) for "no value yet", and "unavailable"
// (STATE_UNAVAILABLE) for an entity that is offline, so an automation
// could not tell a stranger from no answer. The best guess, the top
// scores and the margin stay in the attributes.
const NotRecognized = "unrecognized"

// MaxState is the longest state Home Assistant keeps, in characters
// (homeassistant/const.py MAX_LENGTH_STATE_STATE; core.py validate_state
// refuses a longer one, and the MQTT sensor then keeps no state).
const MaxState = 255

// reserved are the states a class name cannot be published as: Home
// Assistant's MQTT platforms read the payload "None" as no value
// (components/mqtt/const.py PAYLOAD_NONE; sensor.py sets the native
// value to None), "unknown" and "unavailable" are its own, and
// NotRecognized is flycl's.
var reserved = map[string]bool{"None": true, "unknown": true, "unavailable": true, NotRecognized: true, "": true}

// State returns the state published for an answer: NotRecognized for a
// rejection; a class named as one of Home Assistant's own states ("None",
// "unknown", "unavailable") or as NotRecognized followed by " (class)";
// a class name longer than MaxState characters cut to MaxState-1 and
// ended with "…" (the class attribute keeps the whole name).
func State(class string, rejected bool) string {
	switch {
	case rejected:
		return NotRecognized
	case reserved[class]:
		class += " (class)"
	}
	if utf8.RuneCountInString(class) <= MaxState {
		return class
	}
	n := 0
	for i := range class {
		if n == MaxState-1 {
			return class[:i] + "…"
		}
		n++
	}
	return class
}

// sanitize is s with every character outside [a-zA-Z0-9_-] replaced by
// '_' (the topic prefix's part of a node id: its '/' become '_').
func sanitize(s string) string {
	out := []rune(s)
	for i, r := range out {
		if !validIDRune(r) {
			out[i] = '_'
		}
	}
	return string(out)
}

func validIDRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

// nodeID returns Home Assistant's id of a camera (in its node id): discovery topics
// take [a-zA-Z0-9_-] only (components/mqtt/discovery.py TOPIC_MATCHER).
// A name made of those characters is kept as it is; any other character
// becomes '_' and 16 hex digits of the name's SHA-256 are appended, so
// that "front door" (flycl_front_door_…) and "front_door"
// (flycl_front_door) do not fold into one node id.
func nodeID(s string) string {
	if t := sanitize(s); t != s || s == "" {
		h := sha256.Sum256([]byte(s))
		return t + "_" + hex.EncodeToString(h[:8])
	}
	return s
}
