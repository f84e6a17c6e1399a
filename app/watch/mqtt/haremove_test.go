package mqtt

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/app/watch"
)

// retainedNow returns the retained non-empty payloads under filter, as a
// new subscriber sees them.
func retainedNow(t *testing.T, b *broker, filter string) map[string]string {
	t.Helper()
	s := subscribe(t, b, filter)
	time.Sleep(300 * time.Millisecond) // the broker sends them right after the subscription
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for _, m := range s.msgs {
		if m.retained && m.payload != "" {
			out[m.topic] = m.payload
		}
	}
	s.c.Disconnect(0)
	return out
}

// TestEntitiesGoAway runs a camera with zones gate and lawn and the image
// entity, then the same camera with zone gate only and no image: the
// lawn sensor and both image entities get an empty retained config (Home
// Assistant deletes them), the gate sensor stays; then Remove retires
// the camera: nothing of it stays retained. A rejection is published as
// NotRecognized, with the guess and margin in the attributes. Every
// discovery message seen passes the validator written from Home
// Assistant's source.
func TestEntitiesGoAway(t *testing.T) {
	b := startBroker(t)
	all := subscribe(t, b, "homeassistant/#")
	events := subscribe(t, b, "flycl/+/+/event")
	opts := Options{Broker: b.url(), Camera: "front door", Discovery: true, Image: true, Zones: []string{"gate", "lawn"}, Classes: []string{"robin", "jay"},
		MaxBackoff: time.Second, Timeout: 5 * time.Second, Log: quiet()}
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	p.Start(5 * time.Second)
	gate, lawn := p.ZoneTopics("gate"), p.ZoneTopics("lawn")
	p.Update(watch.Update{Event: watch.Event{ID: 1, Zone: "gate", Class: watch.UnknownAnswer},
		Prediction: watch.Prediction{Answer: watch.UnknownAnswer, Unknown: true, Top: []flycl.Ranked{{Name: "robin", Score: 0.5}, {Name: "jay", Score: 0.25}}}})
	if !p.Flush(10 * time.Second) {
		t.Fatal("not published")
	}
	// the announcements end with the last zone's event entity
	all.last(t, lawn.EventDiscovery, func(s string) bool { return s != "" })
	p.Close(time.Second)
	ev := events.last(t, gate.Event, func(string) bool { return true })
	if !strings.Contains(ev, `"event_type":"unrecognized"`) || !strings.Contains(ev, `"guess":"robin"`) {
		t.Fatalf("event %s", ev)
	}
	events.mu.Lock()
	for _, m := range events.msgs {
		if m.retained {
			t.Fatalf("event %s retained: Home Assistant ignores a retained event", m.payload)
		}
	}
	events.mu.Unlock()
	if st := retainedNow(t, b, gate.State)[gate.State]; st != NotRecognized {
		t.Fatalf("state %q, want %q", st, NotRecognized)
	}
	at := retainedNow(t, b, gate.Attributes)[gate.Attributes]
	if !strings.Contains(at, `"guess":"robin"`) || !strings.Contains(at, `"margin":0.25`) || !strings.Contains(at, `"state":"unrecognized"`) {
		t.Fatalf("attributes %s: want the guess, the margin and the state", at)
	}
	before := retainedNow(t, b, "homeassistant/#")
	for _, tp := range []string{gate.Discovery, lawn.Discovery, gate.ImageDiscovery, lawn.ImageDiscovery, gate.EventDiscovery} {
		if before[tp] == "" {
			t.Fatalf("%s not retained after the first run: %v", tp, before)
		}
	}

	opts.Zones, opts.Image, opts.Classes = []string{"gate"}, false, nil
	p2, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	p2.Start(5 * time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for {
		now := retainedNow(t, b, "homeassistant/#")
		if len(now) == 1 && now[gate.Discovery] != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("retained configs after the second run: %v, want only %s", now, gate.Discovery)
		}
	}
	p2.Close(time.Second)
	for _, tp := range []string{lawn.Discovery, gate.ImageDiscovery, lawn.ImageDiscovery, gate.EventDiscovery, lawn.EventDiscovery} {
		all.last(t, tp, is("")) // an empty config last (waits for it)
		if got := all.on(tp); len(got) < 2 {
			t.Fatalf("%s: payloads %q, want the config then an empty one", tp, got)
		}
	}

	// Retiring the camera.
	p3, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	removed, err := p3.Remove(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(removed, gate.Discovery) || !slices.Contains(removed, gate.State) || !slices.Contains(removed, p3.Topics().Availability) {
		t.Fatalf("removed %q", removed)
	}
	if left := retainedNow(t, b, "#"); len(left) != 0 {
		t.Fatalf("retained after Remove: %v", left)
	}
	ids := map[string]string{}
	all.mu.Lock()
	defer all.mu.Unlock()
	for _, m := range all.msgs {
		if err := validateDiscovery("homeassistant", m.topic, []byte(m.payload), ids); err != nil {
			t.Error(err)
		}
	}
}
