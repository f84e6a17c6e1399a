package modelfile

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/flycl/flycl"
)

// TestRecords: Records gives the history exactly as a model file's
// header holds it (the JSON of the file written by Encode), a GCV score
// that is not finite as null.
func TestRecords(t *testing.T) {
	ctx := context.Background()
	m, err := flycl.New(flycl.Config{M: 40, P: 2, K: 10, Lambdas: []float64{1e-30, 1, 10}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Learn(ctx, []float32{1, 0, 0, 0, 1, 0, 0, 0, 1}, []int{7, 8, 9}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Learn(ctx, []float32{0, 1, 1}, []int{4}, &flycl.LearnOptions{Lambda: 3}); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Encode(&b, &File{Snapshot: m.Snapshot()}); err != nil {
		t.Fatal(err)
	}
	fr, err := readFrame(bytes.NewReader(b.Bytes()), int64(b.Len()), modelKind)
	if err != nil {
		t.Fatal(err)
	}
	var hdr struct {
		History json.RawMessage `json:"history"`
	}
	if err := json.Unmarshal(fr.header, &hdr); err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(Records(m.History()))
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	json.Compact(&want, hdr.History)
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("Records:\n%s\nthe file's history:\n%s", got, want.Bytes())
	}
	if len(m.History()) != 2 {
		t.Errorf("%d records", len(m.History()))
	}
}
