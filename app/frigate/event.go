package frigate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/flycl/flycl/internal/onejson"
)

// MaxMessage is the largest event message ParseMessage reads (Frigate's
// are about 1–2 KB).
const MaxMessage = 1 << 20

// ErrMessage is wrapped by every error of ParseMessage.
var ErrMessage = errors.New("frigate: bad event message")

// Message is one message of Frigate's <prefix>/events topic.
type Message struct {
	// Type is "new", "update" or "end".
	Type   string  `json:"type"`
	Before *Object `json:"before"`
	After  *Object `json:"after"`
}

// Object is a tracked object as Frigate's events messages describe it
// (the fields flycl uses; the others are ignored).
type Object struct {
	ID            string    `json:"id"`
	Camera        string    `json:"camera"`
	FrameTime     float64   `json:"frame_time"`
	Snapshot      *Snapshot `json:"snapshot"`
	Label         string    `json:"label"`
	TopScore      float64   `json:"top_score"`
	FalsePositive bool      `json:"false_positive"`
	StartTime     float64   `json:"start_time"`
	EndTime       *float64  `json:"end_time"`
	Score         float64   `json:"score"`
	// Box is [x1, y1, x2, y2] in pixels of the detect stream.
	Box          []float64 `json:"box"`
	Area         float64   `json:"area"`
	Region       []float64 `json:"region"`
	CurrentZones []string  `json:"current_zones"`
	EnteredZones []string  `json:"entered_zones"`
	HasSnapshot  bool      `json:"has_snapshot"`
	HasClip      bool      `json:"has_clip"`
	Stationary   bool      `json:"stationary"`
	// SubLabel and SubLabelScore are the object's sub-label: Frigate
	// sends null, a string (older versions) or [name, score].
	SubLabel      string  `json:"-"`
	SubLabelScore float64 `json:"-"`
}

// Snapshot is the frame Frigate keeps as the object's best picture.
type Snapshot struct {
	FrameTime float64   `json:"frame_time"`
	Box       []float64 `json:"box"`
	Area      float64   `json:"area"`
	Region    []float64 `json:"region"`
	Score     float64   `json:"score"`
}

// ShortSide is the shorter side of the object's box in pixels.
func (o *Object) ShortSide() float64 {
	return math.Min(o.Box[2]-o.Box[0], o.Box[3]-o.Box[1])
}

// SnapshotKey identifies the object's current snapshot: its frame time
// (0 without one). A new key means a new picture to classify.
func (o *Object) SnapshotKey() float64 {
	if o.Snapshot != nil {
		return o.Snapshot.FrameTime
	}
	return 0
}

// ParseMessage parses one event message and checks its shape: a known
// type, an "after" object with an id, a camera, a label and a box of 4
// finite coordinates with x1 ≤ x2 and y1 ≤ y2.
func ParseMessage(b []byte) (*Message, error) {
	if len(b) > MaxMessage {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrMessage, len(b), MaxMessage)
	}
	var m Message
	d := json.NewDecoder(bytes.NewReader(b))
	if err := onejson.Decode(d, &m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMessage, err)
	}
	switch m.Type {
	case "new", "update", "end":
	default:
		return nil, fmt.Errorf("%w: type %q, want new, update or end", ErrMessage, m.Type)
	}
	if m.After == nil {
		return nil, fmt.Errorf("%w: no \"after\" object", ErrMessage)
	}
	// The sub-label's two shapes.
	var raw struct {
		Before, After struct {
			SubLabel json.RawMessage `json:"sub_label"`
		}
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMessage, err)
	}
	if err := check(m.After, raw.After.SubLabel, "after"); err != nil {
		return nil, err
	}
	if m.Before != nil {
		if err := check(m.Before, raw.Before.SubLabel, "before"); err != nil {
			return nil, err
		}
	}
	return &m, nil
}

func check(o *Object, sub json.RawMessage, name string) error {
	switch {
	case o.ID == "":
		return fmt.Errorf("%w: %s.id is empty", ErrMessage, name)
	case !validID(o.ID):
		return fmt.Errorf("%w: %s.id %.80q: want at most 64 letters, digits, '.', '_' or '-'", ErrMessage, name, o.ID)
	case o.Camera == "":
		return fmt.Errorf("%w: %s.camera is empty", ErrMessage, name)
	case o.Label == "":
		return fmt.Errorf("%w: %s.label is empty", ErrMessage, name)
	}
	if err := box(o.Box, name+".box"); err != nil {
		return err
	}
	if o.Snapshot != nil && o.Snapshot.Box != nil {
		if err := box(o.Snapshot.Box, name+".snapshot.box"); err != nil {
			return err
		}
	}
	if o.Snapshot != nil && !finite(o.Snapshot.FrameTime) {
		return fmt.Errorf("%w: %s.snapshot.frame_time is not finite", ErrMessage, name)
	}
	s := bytes.TrimSpace(sub)
	switch {
	case len(s) == 0 || string(s) == "null":
	case s[0] == '"':
		if err := json.Unmarshal(s, &o.SubLabel); err != nil {
			return fmt.Errorf("%w: %s.sub_label: %v", ErrMessage, name, err)
		}
	case s[0] == '[':
		var pair []json.RawMessage
		if err := json.Unmarshal(s, &pair); err != nil || len(pair) != 2 {
			return fmt.Errorf("%w: %s.sub_label: want null, a string or [name, score]", ErrMessage, name)
		}
		if err := json.Unmarshal(pair[0], &o.SubLabel); err != nil {
			return fmt.Errorf("%w: %s.sub_label[0]: %v", ErrMessage, name, err)
		}
		if string(bytes.TrimSpace(pair[1])) != "null" {
			if err := json.Unmarshal(pair[1], &o.SubLabelScore); err != nil {
				return fmt.Errorf("%w: %s.sub_label[1]: %v", ErrMessage, name, err)
			}
		}
	default:
		return fmt.Errorf("%w: %s.sub_label: want null, a string or [name, score]", ErrMessage, name)
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func box(b []float64, name string) error {
	if len(b) != 4 {
		return fmt.Errorf("%w: %s has %d numbers, want 4 (x1, y1, x2, y2)", ErrMessage, name, len(b))
	}
	for _, v := range b {
		if !finite(v) {
			return fmt.Errorf("%w: %s has a non-finite coordinate", ErrMessage, name)
		}
	}
	if b[2] < b[0] || b[3] < b[1] {
		return fmt.Errorf("%w: %s %v has x2 < x1 or y2 < y1", ErrMessage, name, b)
	}
	return nil
}

// validID accepts Frigate's event ids (<start time>-<random>), which go
// into the API's URL paths: at most 64 letters, digits, '.', '_' or '-',
// and not "." or "..".
func validID(id string) bool {
	if len(id) > 64 || id == "." || id == ".." {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
