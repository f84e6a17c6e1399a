package frigate

import (
	"errors"
	"strings"
	"testing"
)

// docMessage is an update message shaped as Frigate's MQTT documentation
// shows it (https://docs.frigate.video/integrations/mqtt/, frigate/events).
const docMessage = `{
  "type": "update",
  "before": {
    "id": "1607123955.475377-mxklsc", "camera": "front_door", "frame_time": 1607123961.837752,
    "snapshot": {"frame_time": 1607123965.975463, "box": [415, 489, 528, 700], "area": 12728,
                 "region": [260, 446, 660, 846], "score": 0.77546, "attributes": []},
    "label": "person", "sub_label": null, "top_score": 0.958984375, "false_positive": false,
    "start_time": 1607123955.475377, "end_time": null, "score": 0.7890625,
    "box": [424, 500, 536, 712], "area": 23744, "ratio": 2.113207, "region": [264, 450, 667, 853],
    "current_zones": ["driveway"], "entered_zones": ["yard", "driveway"], "thumbnail": null,
    "has_snapshot": false, "has_clip": false, "active": true, "stationary": false,
    "motionless_count": 0, "position_changes": 2, "attributes": {}
  },
  "after": {
    "id": "1607123955.475377-mxklsc", "camera": "front_door", "frame_time": 1607123962.082975,
    "snapshot": {"frame_time": 1607123965.975463, "box": [415, 489, 528, 700], "area": 12728,
                 "region": [260, 446, 660, 846], "score": 0.77546, "attributes": []},
    "label": "person", "sub_label": ["Bob", 0.87], "top_score": 0.958984375, "false_positive": false,
    "start_time": 1607123955.475377, "end_time": null, "score": 0.87890625,
    "box": [432, 496, 544, 854], "area": 40096, "ratio": 1.251397, "region": [218, 440, 693, 915],
    "current_zones": ["yard", "driveway"], "entered_zones": ["yard", "driveway"], "thumbnail": null,
    "has_snapshot": true, "has_clip": true, "active": true, "stationary": false,
    "motionless_count": 0, "position_changes": 2, "attributes": {"face": 0.86}
  }
}`

func TestParseMessageDocumented(t *testing.T) {
	m, err := ParseMessage([]byte(docMessage))
	if err != nil {
		t.Fatal(err)
	}
	a := m.After
	if m.Type != "update" || a.ID != "1607123955.475377-mxklsc" || a.Camera != "front_door" || a.Label != "person" ||
		!a.HasSnapshot || a.SubLabel != "Bob" || a.SubLabelScore != 0.87 || m.Before.SubLabel != "" ||
		a.SnapshotKey() != 1607123965.975463 || len(a.CurrentZones) != 2 || a.EndTime != nil {
		t.Fatalf("parsed %+v", a)
	}
	// Box [432, 496, 544, 854]: 112 wide, 358 high.
	if got := a.ShortSide(); got != 112 {
		t.Fatalf("ShortSide = %g, want 112", got)
	}
	old := strings.Replace(docMessage, `["Bob", 0.87]`, `"Bob"`, 1) // Frigate before 0.14
	if m, err := ParseMessage([]byte(old)); err != nil || m.After.SubLabel != "Bob" || m.After.SubLabelScore != 0 {
		t.Fatalf("string sub_label: %v %+v", err, m)
	}
}

func TestParseMessageRefuses(t *testing.T) {
	for _, c := range []struct{ name, old, new, field string }{
		{"type", `"type": "update"`, `"type": "moved"`, "type"},
		{"no after", `"after": {`, `"later": {`, "after"},
		{"box length", `"box": [432, 496, 544, 854]`, `"box": [432, 496, 544]`, "after.box"},
		{"box order", `"box": [432, 496, 544, 854]`, `"box": [544, 496, 432, 854]`, "after.box"},
		{"id", `"id": "1607123955.475377-mxklsc", "camera": "front_door", "frame_time": 1607123962`, `"id": "", "camera": "front_door", "frame_time": 1607123962`, "after.id"},
		{"id path", `"id": "1607123955.475377-mxklsc", "camera": "front_door", "frame_time": 1607123962`, `"id": "../../api/restart", "camera": "front_door", "frame_time": 1607123962`, "after.id"},
		{"id dots", `"id": "1607123955.475377-mxklsc", "camera": "front_door", "frame_time": 1607123962`, `"id": "..", "camera": "front_door", "frame_time": 1607123962`, "after.id"},
		{"sub_label", `["Bob", 0.87]`, `{"name": "Bob"}`, "after.sub_label"},
		{"sub_label pair", `["Bob", 0.87]`, `["Bob"]`, "after.sub_label"},
		{"snapshot box", `"box": [415, 489, 528, 700], "area": 12728,
                 "region": [260, 446, 660, 846], "score": 0.77546, "attributes": []},
    "label": "person", "sub_label": [`, `"box": [415, 489], "area": 12728,
                 "region": [260, 446, 660, 846], "score": 0.77546, "attributes": []},
    "label": "person", "sub_label": [`, "after.snapshot.box"},
		{"json", `"type": "update",`, `"type": "update"`, "invalid"},
	} {
		t.Run(c.name, func(t *testing.T) {
			msg := strings.Replace(docMessage, c.old, c.new, 1)
			if msg == docMessage {
				t.Fatalf("the case does not change the message")
			}
			_, err := ParseMessage([]byte(msg))
			if !errors.Is(err, ErrMessage) || !strings.Contains(err.Error(), c.field) {
				t.Fatalf("err = %v, want ErrMessage naming %s", err, c.field)
			}
		})
	}
	if _, err := ParseMessage(make([]byte, MaxMessage+1)); !errors.Is(err, ErrMessage) {
		t.Fatalf("oversized: %v", err)
	}
}

// FuzzParseMessage: never a panic; an accepted message has the shape
// the labeller relies on.
func FuzzParseMessage(f *testing.F) {
	f.Add([]byte(docMessage))
	f.Add([]byte(strings.Replace(docMessage, `"type": "update"`, `"type": "new"`, 1)))
	f.Add([]byte(strings.Replace(docMessage, `["Bob", 0.87]`, `"Bob"`, 1)))
	f.Add([]byte(`{"type":"end","before":null,"after":{"id":"a","camera":"c","label":"bird","box":[0,0,1,1],"end_time":3.5,"sub_label":[null,null]}}`))
	f.Add([]byte(`{"type":"new","after":{"id":"a","camera":"c","label":"bird","box":[1e308,0,1e308,1]}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseMessage(b)
		if err != nil {
			if !errors.Is(err, ErrMessage) {
				t.Fatalf("error not ErrMessage: %v", err)
			}
			return
		}
		if m.After == nil || !validID(m.After.ID) || m.After.ID == "" || len(m.After.Box) != 4 || !(m.After.ShortSide() >= 0) {
			t.Fatalf("accepted %+v", m.After)
		}
	})
}
