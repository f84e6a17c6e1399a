package teach

import (
	"context"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/flycl/flycl/format/modelfile"
)

// FuzzCompute appends to a model's history (build: a, b and c learned, x
// learned and forgotten) one entry whose every field is the fuzzer's, as
// a journal decodes it from outside bytes: an op, a version, the version
// an unlearn undoes, names and features of any length. Compute never
// panics; it reports on samples of the model's length only (a learn of
// another length is refused naming its version, never scored
// misaligned), and its counts add up.
func FuzzCompute(f *testing.F) {
	m, hist := build(f)
	rows := func(v ...float32) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
		return b
	}
	f.Add(uint8(0), uint64(9), uint64(0), "a,b", testD, rows(1, 0, 0, 0.2, 0, 1, 0, 0.2))
	f.Add(uint8(0), uint64(9), uint64(0), "a,b", 2, rows(1, 0, 0, 0.2))
	f.Add(uint8(0), uint64(9), uint64(0), "a", 6, rows(1, 0, 0, 0.2, 1, 1))
	f.Add(uint8(0), uint64(9), uint64(0), "zz,a", testD, rows(1, 0, 0, 0.2, 0, 1, 0, 0.2))
	f.Add(uint8(0), uint64(9), uint64(0), "a", testD, rows(float32(math.NaN()), 0, 0, 0.2))
	f.Add(uint8(1), uint64(9), uint64(0), "a", testD, []byte(nil))
	f.Add(uint8(1), uint64(9), uint64(0), "b", testD, []byte(nil))
	f.Add(uint8(2), uint64(9), uint64(1), "", testD, []byte(nil))
	f.Add(uint8(2), uint64(9), uint64(3), "", testD, []byte(nil))
	f.Fuzz(func(t *testing.T, op uint8, version, undoes uint64, names string, d int, xb []byte) {
		e := &modelfile.JournalEntry{Op: []string{"learn", "forget", "unlearn", "merge"}[op%4], Version: version,
			Undoes: undoes, Names: strings.Split(names, ","), D: d}
		for i := 0; i+4 <= len(xb); i += 4 {
			e.X = append(e.X, math.Float32frombits(binary.LittleEndian.Uint32(xb[i:])))
		}
		h := append(append([]*modelfile.JournalEntry{}, hist...), e)
		rep, err := Compute(context.Background(), m, h, Options{})
		if err != nil {
			return
		}
		scored := 0
		for _, c := range rep.Classes {
			scored += c.Scored
			if !(c.Accuracy >= 0 && c.Accuracy <= 1) || !(c.Rejected >= 0 && c.Rejected <= 1) {
				t.Fatalf("class %+v", c)
			}
		}
		if scored != rep.Samples || len(rep.Hardest) > rep.Samples || !(rep.Accuracy >= 0 && rep.Accuracy <= 1) {
			t.Fatalf("report of %d samples, %d scored by class, %d hardest, accuracy %g", rep.Samples, scored, len(rep.Hardest), rep.Accuracy)
		}
		if e.Op == "learn" && e.D != testD && len(e.X) == len(e.Names)*e.D && e.D > 0 {
			for _, n := range e.Names {
				if n == "a" || n == "b" || n == "c" {
					t.Fatalf("a learn of d=%d (%q) reported on, not refused", e.D, names)
				}
			}
		}
	})
}

// Two learns of other lengths whose rows add up to whole samples of the
// model's (2 + 6 features for two of 4) were scored misaligned when only
// the first sample's length was checked; the second is now refused
// naming its version.
func TestComputeMixedLengths(t *testing.T) {
	m, hist := build(t)
	h := append(append([]*modelfile.JournalEntry{}, hist...),
		&modelfile.JournalEntry{Op: "learn", Version: 98, Names: []string{"a", "b"}, D: 2, X: []float32{1, 0, 0, 1}},
		&modelfile.JournalEntry{Op: "learn", Version: 99, Names: []string{"a", "b"}, D: 6, X: make([]float32, 12)})
	if _, err := Compute(context.Background(), m, h, Options{}); err == nil || !strings.Contains(err.Error(), "learn of version 98 has samples of 2 features") {
		t.Fatalf("err %v, want the learn of version 98 refused", err)
	}
}
