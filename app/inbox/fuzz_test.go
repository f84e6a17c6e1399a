package inbox

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzSidecar feeds arbitrary bytes to the sidecar parser, as Open reads
// them from the folder: it must refuse or accept without panicking, and a
// sidecar it accepts must pass its checks again after a round trip
// through JSON and come back equal.
func FuzzSidecar(f *testing.F) {
	// seeds: real sidecars (with and without an image) and damaged ones
	dir := f.TempDir()
	b, err := Open(dir, Options{Now: clock()})
	if err != nil {
		f.Fatal(err)
	}
	p := 0.3
	e := entry(2, 6)
	e.Image, e.Probability, e.Why, e.Camera, e.Zone = testImage(9, 7), &p, Change, "drive", "gate"
	for _, e := range []Entry{entry(1, 4), e} {
		it, _, err := b.Add(e)
		if err != nil {
			f.Fatal(err)
		}
		js, err := os.ReadFile(filepath.Join(dir, it.ID, sidecarName))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(js, it.ID)
		f.Add(js[:len(js)/2], it.ID)
		f.Add(bytes.Replace(js, []byte(`"d":`), []byte(`"d":1e9,"x":`), 1), it.ID)
		f.Add(bytes.Replace(js, []byte(`"top":[`), []byte(`"top":[{"class":"","score":1},`), 1), it.ID)
		f.Add(append(js, js...), it.ID)
	}
	b.Close()
	f.Add([]byte(`{"format":"flycl-inbox/1","id":"00000000000000000001","time":"2026-11-26T12:00:00Z","d":1,"features_bytes":4,"guess":"a","why":"unknown","probability":2}`), "00000000000000000001")
	f.Add([]byte(`null`), "00000000000000000001")
	f.Add([]byte(`{"top":[{"score":NaN}]}`), "x")
	f.Fuzz(func(t *testing.T, data []byte, id string) {
		s, err := parseSidecar(bytes.NewReader(data), id)
		if err != nil {
			return
		}
		if err := s.check(id); err != nil {
			t.Fatalf("accepted a sidecar its checks refuse: %v", err)
		}
		js, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("an accepted sidecar does not encode: %v", err)
		}
		s2, err := parseSidecar(bytes.NewReader(js), id)
		if err != nil {
			t.Fatalf("an accepted sidecar, encoded again, is refused: %v\n%s", err, js)
		}
		if !reflect.DeepEqual(s.Item.Top, s2.Item.Top) || !s.Time.Equal(s2.Time) || s.Dim != s2.Dim || s.Guess != s2.Guess {
			t.Fatalf("round trip changed the sidecar:\n%+v\n%+v", s, s2)
		}
	})
}
