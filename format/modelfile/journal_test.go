package modelfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flycl/flycl/reject"
)

func testEntry(v uint64, n, d int) *JournalEntry {
	e := &JournalEntry{Op: "learn", Version: v, D: d, Lambda: 0.5}
	for i := range n {
		e.Names = append(e.Names, "c"+string(rune('a'+int(v)%26)))
		for j := range d {
			e.X = append(e.X, float32(int(v)*1000+i*d+j)/7)
		}
	}
	return e
}

func sameEntry(a, b *JournalEntry) bool {
	return a.Op == b.Op && a.Version == b.Version && slices.Equal(a.Names, b.Names) && a.D == b.D &&
		a.Lambda == b.Lambda && a.Online == b.Online && a.Batch == b.Batch && slices.Equal(a.X, b.X) &&
		sameJournalCalibration(a.Calibration, b.Calibration)
}

// sameJournalCalibration compares two calibrations bit for bit (nil only equals
// nil).
func sameJournalCalibration(a, b *JournalCalibration) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Rejection != b.Rejection || len(a.Pool) != len(b.Pool) {
		return false
	}
	for i := range a.Pool {
		if math.Float32bits(a.Pool[i]) != math.Float32bits(b.Pool[i]) {
			return false
		}
	}
	return true
}

// testCalibration is a calibration whose numbers test the round trip
// through the entry's JSON header: a threshold and temperature that need
// all 17 digits, a negative zero, the smallest subnormal and the largest
// float32 in the pool.
func testCalibration() *JournalCalibration {
	return &JournalCalibration{
		Rejection: reject.Rule{Score: reject.ScoreTop, Threshold: 0.1 + 0.2, Keep: 0.95, Temperature: math.Nextafter(0.13, 1), Samples: 5},
		Pool:      []float32{0.1, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, math.MaxFloat32, -3.25},
	}
}

// TestJournal: appended entries read back exactly; a record cut off at
// the end (a writer killed mid-append) is ignored by readers and cut off
// by the next writer; a damaged record before the end is an error; a new
// checkpoint skips what it holds; a journal that does not continue the
// model file is refused.
func TestJournal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.flycl")
	const base, crc = 5, 0xdeadbeef
	j, old, err := openJ(path, base, crc)
	if err != nil || len(old) != 0 {
		t.Fatalf("new journal: %v %d", err, len(old))
	}
	var want []*JournalEntry
	for v := uint64(base + 1); v <= base+4; v++ {
		e := testEntry(v, int(v%3)+1, 4)
		if v == base+3 {
			e = &JournalEntry{Op: "forget", Version: v, Names: []string{"x"}, D: 4}
		}
		if v == base+2 {
			e.Calibration = testCalibration() // what an undo of it restores
		}
		if err := j.Append(e); err != nil {
			t.Fatal(err)
		}
		want = append(want, e)
	}
	if n, _ := j.Len(); n != 4 {
		t.Fatalf("Len %d", n)
	}
	j.Close()
	check := func(what string, got []*JournalEntry, want []*JournalEntry) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d entries, want %d", what, len(got), len(want))
		}
		for i := range got {
			if !sameEntry(got[i], want[i]) {
				t.Fatalf("%s: entry %d = %+v, want %+v", what, i, got[i], want[i])
			}
		}
	}
	got, full, err := readJ(path, base, crc)
	if err != nil {
		t.Fatal(err)
	}
	check("read back", got, want)

	// a cut-off last record: ignored, then cut off by the next writer
	jp := JournalPath(path)
	b, _ := os.ReadFile(jp)
	for _, cut := range []int{1, 7, 20} {
		os.WriteFile(jp, b[:len(b)-cut], 0o644)
		got, valid, err := readJ(path, base, crc)
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		check("cut off", got, want[:3])
		if valid >= full {
			t.Fatalf("cut %d: valid %d of %d", cut, valid, full)
		}
	}
	j, got, err = openJ(path, base, crc)
	if err != nil {
		t.Fatal(err)
	}
	check("reopened", got, want[:3])
	e5 := testEntry(base+5, 2, 4)
	if err := j.Append(e5); err != nil {
		t.Fatal(err)
	}
	j.Close()
	got, _, err = readJ(path, base, crc)
	if err != nil {
		t.Fatal(err)
	}
	check("appended after the cut", got, append(want[:3:3], e5))

	// a flipped bit in the first record: damaged, not silently dropped
	b, _ = os.ReadFile(jp)
	bad := bytes.Clone(b)
	bad[journalHeader+20] ^= 1
	os.WriteFile(jp, bad, 0o644)
	if _, _, err := readJ(path, base, crc); !errors.Is(err, ErrJournal) {
		t.Fatalf("damaged record: %v", err)
	}
	os.WriteFile(jp, b, 0o644)

	// a model file at version base+2 that is not the journal's base, with
	// entries above it in the journal: it does not continue that file (a
	// checkpoint starts a new journal; only a crash between the two leaves
	// entries, all of them at or below the checkpoint)
	if _, _, err := readJ(path, base+2, 0x1234); !errors.Is(err, ErrJournal) {
		t.Fatalf("journal over another checkpoint: %v", err)
	}
	// another model file (other CRC) at the journal's base: refused
	if _, _, err := readJ(path, base, 0x1234); !errors.Is(err, ErrJournal) {
		t.Fatalf("journal of another file: %v", err)
	}
	// a checkpoint that holds everything: nothing to replay
	if got, _, err := readJ(path, base+9, 1); err != nil || len(got) != 0 {
		t.Fatalf("after a full checkpoint: %d entries, %v", len(got), err)
	}
	// ResetJournal starts it anew
	if err := ResetJournal(path, Checkpoint{Version: base + 9, CRC: 7}); err != nil {
		t.Fatal(err)
	}
	if got, _, err := readJ(path, base+9, 7); err != nil || len(got) != 0 {
		t.Fatalf("reset: %d entries, %v", len(got), err)
	}
	// ... keeping what the checkpoint holds as history, for undo
	hist, err := ReadHistory(path, ModelID{})
	if err != nil {
		t.Fatal(err)
	}
	check("history kept by the reset", hist, append(want[:3:3], e5))
	// a checkpoint below some entries keeps only those it holds
	if err := ResetJournal(path, Checkpoint{Version: base + 2, CRC: 8}); err != nil {
		t.Fatal(err)
	}
	if hist, err = ReadHistory(path, ModelID{}); err != nil {
		t.Fatal(err)
	}
	check("history at or below the checkpoint", hist, want[:2])
}

// FuzzDecodeJournal: a journal is outside bytes: decoding never panics,
// never allocates more than the input holds, and every entry it returns
// is well formed.
func FuzzDecodeJournal(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "m.flycl")
	j, _, err := openJ(path, 1, 2)
	if err != nil {
		f.Fatal(err)
	}
	j.Append(testEntry(2, 2, 3))
	j.Append(&JournalEntry{Op: "forget", Version: 3, Names: []string{"c"}, D: 3})
	withCal := testEntry(4, 1, 3)
	withCal.Calibration = testCalibration()
	j.Append(withCal)
	j.Close()
	b, _ := os.ReadFile(JournalPath(path))
	f.Add(b)
	// every torn shape (each also followed by a whole record: damage)
	for _, torn := range tornShapes(b, len(b)-int(RecordSize(withCal))) {
		f.Add(torn)
		rec, _ := encodeRecord(testEntry(9, 1, 3))
		f.Add(append(bytes.Clone(torn), rec...))
	}
	f.Add(b[:len(b)-3])
	f.Add(b[:journalHeader])
	f.Add([]byte("FLYCLJNL"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeJournal(bytes.NewReader(b), int64(len(b)), "fuzz", Checkpoint{Version: 1, CRC: 2})
		if err != nil {
			return
		}
		entries, valid := c.Entries, c.Valid
		if c.Torn != nil && (c.Torn.Offset != valid || c.Torn.Offset+c.Torn.Bytes != int64(len(b))) {
			t.Fatalf("torn tail %+v with valid %d of %d bytes", c.Torn, valid, len(b))
		}
		if valid > int64(len(b)) {
			t.Fatalf("valid %d of %d bytes", valid, len(b))
		}
		for _, e := range entries {
			if e.D <= 0 || len(e.X)%e.D != 0 || e.Version <= 1 || (e.Op == "learn" && len(e.Names) != e.Rows()) {
				t.Fatalf("entry %+v", e)
			}
			if c := e.Calibration; c != nil {
				if err := c.Rejection.Validate(); err != nil || len(c.Pool) > reject.MaxCalibrationPool || e.Op == "forget" {
					t.Fatalf("entry %+v with calibration %+v (%v)", e, c.Rejection, err)
				}
			}
		}
	})
}

// TestJournalAfterCheckpointCrash: a writer killed between a checkpoint
// and the journal's reset leaves the old journal, whose entries the new
// checkpoint holds. The next writer's OpenJournal starts it anew on the
// checkpoint (keeping its history) before appending: else its entries
// would sit in a journal of the older base, which no load accepts.
func TestJournalAfterCheckpointCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.flycl")
	j, _, err := openJ(path, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	for v := uint64(11); v <= 13; v++ {
		if err := j.Append(testEntry(v, 1, 2)); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	// the checkpoint at 13 (CRC 2) was written; the reset never ran
	j, old, err := openJ(path, 13, 2)
	if err != nil || len(old) != 0 {
		t.Fatalf("reopen on the new checkpoint: %d entries, %v", len(old), err)
	}
	e := testEntry(14, 1, 2)
	if err := j.Append(e); err != nil {
		t.Fatal(err)
	}
	j.Close()
	got, _, err := readJ(path, 13, 2)
	if err != nil || len(got) != 1 || !sameEntry(got[0], e) {
		t.Fatalf("after the reopen: %d entries, %v", len(got), err)
	}
	if hist, err := ReadHistory(path, ModelID{}); err != nil || len(hist) != 4 {
		t.Fatalf("history: %d entries, %v", len(hist), err)
	}
}

// TestJournalCalibration: a learn entry of a journal written before
// calibrations were recorded (no "calibration" in its header) reads with
// none; a calibration that does not mean something is refused, naming
// what is wrong.
func TestJournalCalibration(t *testing.T) {
	payload := func(header string) []byte {
		p := binary.LittleEndian.AppendUint32(nil, uint32(len(header)))
		p = append(p, header...)
		return binary.LittleEndian.AppendUint32(p, math.Float32bits(1.5))
	}
	e, err := decodeEntry(payload(`{"op":"learn","version":2,"lambda_before":0.5,"names":["a"],"d":1}`))
	if err != nil || e.Calibration != nil || !slices.Equal(e.X, []float32{1.5}) {
		t.Fatalf("an entry without calibration: %+v, %v", e, err)
	}
	for _, c := range []struct{ cal, op, want string }{
		{`{"rejection":{"score":"median","threshold":1}}`, "learn", "median"},
		{`{"rejection":{"score":"top","threshold":1,"keep":1.5}}`, "learn", "keep"},
		{`{"rejection":{"threshold":1,"temperature":-1}}`, "learn", "temperature"},
		{`{"rejection":{"threshold":1e400}}`, "learn", "calibration"},
		{`{"rejection":{"threshold":1},"pool":[1e39]}`, "learn", "calibration"},
		{`{"rejection":{"threshold":1},"pool":[1],"extra":2}`, "learn", "extra"},
		{`{"rejection":{"threshold":1}}`, "forget", "forget with a calibration"},
	} {
		h := fmt.Sprintf(`{"op":%q,"version":2,"names":["a"],"d":1,"calibration":%s}`, c.op, c.cal)
		if _, err := decodeEntry(payload(h)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", h, err, c.want)
		}
	}
}

// readJ is ReadJournal on a checkpoint without an ID, returning its
// entries and valid length.
func readJ(path string, base uint64, crc uint32) ([]*JournalEntry, int64, error) {
	c, err := ReadJournal(path, Checkpoint{Version: base, CRC: crc})
	if err != nil {
		return nil, 0, err
	}
	return c.Entries, c.Valid, nil
}

// openJ is OpenJournal on a checkpoint without an ID.
func openJ(path string, base uint64, crc uint32) (*Journal, []*JournalEntry, error) {
	j, c, err := OpenJournal(path, Checkpoint{Version: base, CRC: crc})
	if err != nil {
		return nil, nil, err
	}
	return j, c.Entries, nil
}
