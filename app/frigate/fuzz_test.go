package frigate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// compact is a message on one line (the fuzz input holds one a line).
func compact(tb testing.TB, b []byte) []byte {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		tb.Fatal(err)
	}
	return out.Bytes()
}

// FuzzHandle feeds a sequence of events messages (one a line), as a
// broker delivers them, to a Labeller whose workers are not running:
// whatever the messages, Handle never panics, every message is counted
// once (refused, skipped for one reason, or queued), the queue holds at
// most Config.Queue snapshots, and each queued snapshot belongs to an
// object the Labeller still remembers, which counts it as pending and
// as tried or queued.
func FuzzHandle(f *testing.F) {
	lines := func(msgs ...[]byte) []byte {
		var b [][]byte
		for _, m := range msgs {
			b = append(b, compact(f, m))
		}
		return bytes.Join(b, []byte("\n"))
	}
	box := [4]int{0, 0, 100, 100}
	// a bird seen three times, then ended
	f.Add(lines(msg("new", "a", "front", "bird", box, 1, false), msg("update", "a", "front", "bird", box, 2, false),
		msg("update", "a", "front", "bird", box, 2, false), msg("end", "a", "front", "bird", box, 3, true)))
	// more snapshots than the queue holds, and more tries than MaxTries
	f.Add(lines(msg("new", "a", "front", "bird", box, 1, false), msg("update", "b", "front", "bird", box, 1, false),
		msg("update", "a", "front", "bird", box, 2, false), msg("update", "c", "back", "bird", box, 1, false),
		msg("update", "a", "front", "bird", box, 3, false), msg("update", "a", "front", "bird", box, 4, false)))
	// skipped: another label, a small box, a false positive, no snapshot, another sub-label
	f.Add(lines(msg("new", "c", "front", "car", box, 1, false), msg("new", "s", "front", "bird", [4]int{0, 0, 5, 5}, 1, false),
		[]byte(strings.Replace(string(msg("new", "f", "front", "bird", box, 1, false)), `"false_positive":false`, `"false_positive":true`, 1)),
		[]byte(`{"type":"new","after":{"id":"n","camera":"front","label":"bird","box":[0,0,100,100]}}`),
		[]byte(strings.Replace(string(msg("update", "o", "front", "bird", box, 1, false)), `"sub_label":null`, `"sub_label":["Bob",0.9]`, 1))))
	// an end before anything, an end twice, a message again after the end
	f.Add(lines(msg("end", "e", "front", "bird", box, 1, false), msg("new", "e", "front", "bird", box, 1, false),
		msg("end", "e", "front", "bird", box, 1, false), msg("end", "e", "front", "bird", box, 1, false),
		msg("update", "e", "front", "bird", box, 2, false)))
	f.Add(lines([]byte(docMessage), []byte(`null`)))
	f.Add([]byte("{\"type\":\"new\"}\n\n{}\nnot json"))
	f.Fuzz(func(t *testing.T, b []byte) {
		const queue = 3
		l, err := New(Config{Frigate: "http://127.0.0.1:1", Classify: redness{}, Labels: []string{"bird"},
			MinBox: 10, Queue: queue, Rule: oneTry, MaxTries: 2})
		if err != nil {
			t.Fatal(err)
		}
		msgs := bytes.Split(b, []byte("\n"))
		for _, m := range msgs {
			l.Handle(m)
		}
		s := l.Stats()
		skipped := int64(0)
		for _, n := range s.Skipped {
			skipped += n
		}
		switch {
		case s.Received != int64(len(msgs)):
			t.Fatalf("%d messages, %d received", len(msgs), s.Received)
		case s.Bad+skipped+s.Queued != s.Received:
			t.Fatalf("%d received: %d refused + %d skipped + %d queued", s.Received, s.Bad, skipped, s.Queued)
		case s.Skipped[SkipNoAgreement] != 0:
			t.Fatalf("%d objects undecided with no try made", s.Skipped[SkipNoAgreement])
		case int64(len(l.queue)) != s.Queued-s.Dropped || len(l.queue) > queue:
			t.Fatalf("%d queued, %d dropped, %d in a queue of %d", s.Queued, s.Dropped, len(l.queue), queue)
		}
		pending := 0
		for _, st := range l.objs {
			if st.pending < 0 || (st.ended && st.pending == 0) {
				t.Fatalf("an object with %d pending (ended %v) is remembered", st.pending, st.ended)
			}
			pending += st.pending
		}
		if pending != len(l.queue) {
			t.Fatalf("%d snapshots pending, %d queued", pending, len(l.queue))
		}
		for _, j := range l.queue {
			st := l.objs[j.id]
			if st == nil || !st.keys[j.key] {
				t.Fatalf("queued snapshot %v of an object forgotten or not marked tried", j)
			}
			if !validID(j.id) || j.camera == "" || j.label != "bird" {
				t.Fatalf("queued %+v", j)
			}
		}
	})
}
