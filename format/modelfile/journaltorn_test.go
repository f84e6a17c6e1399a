package modelfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flycl/flycl/reject"
)

// tornShapes returns a whole journal b and what crashes and power losses
// leave at its end (each with the records before the tail whole), by
// name.
func tornShapes(b []byte, lastRecord int) map[string][]byte {
	lenBeyond := binary.LittleEndian.AppendUint32(nil, 1<<31)
	lenBeyond = append(lenBeyond, 0, 0, 0, 0)
	return map[string][]byte{
		"zero-filled 4096":         append(bytes.Clone(b), make([]byte, 4096)...),
		"zero-filled after a cut":  append(bytes.Clone(b[:len(b)-5]), make([]byte, 4096)...),
		"length beyond the end":    append(bytes.Clone(b), lenBeyond...),
		"partial header":           append(bytes.Clone(b), 7, 0, 0),
		"partial payload":          bytes.Clone(b[:len(b)-3]),
		"record header only":       bytes.Clone(b[:lastRecord+8]),
		"small length, zero after": append(bytes.Clone(b), append([]byte{40, 0, 0, 0, 1, 2, 3, 4}, make([]byte, 100)...)...),
	}
}

// TestJournalTornTails: every shape a crash or power loss leaves at the
// end of a journal is ignored with a description (Torn), the records
// before it are read, and the next writer cuts it off before appending;
// the same damage with a whole record after it is refused
// (ErrJournalDamaged), naming flycl repair.
func TestJournalTornTails(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.flycl")
	cp := Checkpoint{Version: 1, CRC: 2, ID: NewModelID()}
	j, _, err := OpenJournal(path, cp)
	if err != nil {
		t.Fatal(err)
	}
	var want []*JournalEntry
	var lastRecord int64
	for v := uint64(2); v <= 4; v++ {
		e := testEntry(v, 2, 3)
		_, lastRecord = j.Len()
		if err := j.Append(e); err != nil {
			t.Fatal(err)
		}
		want = append(want, e)
	}
	j.Close()
	jp := JournalPath(path)
	whole, _ := os.ReadFile(jp)
	for name, b := range tornShapes(whole, int(lastRecord)) {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(jp, b, 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := ReadJournal(path, cp)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			n := len(want)
			if c.Valid < int64(len(whole)) {
				n-- // the tail cut into the last record
			}
			if len(c.Entries) != n || c.Torn == nil || c.Torn.Offset != c.Valid || c.Torn.Offset+c.Torn.Bytes != int64(len(b)) {
				t.Fatalf("%d entries (want %d), torn %+v, valid %d of %d", len(c.Entries), n, c.Torn, c.Valid, len(b))
			}
			for i, e := range c.Entries {
				if !sameEntry(e, want[i]) {
					t.Fatalf("entry %d differs", i)
				}
			}
			if !strings.Contains(c.Torn.String(), "never acknowledged") {
				t.Fatalf("description %q", c.Torn)
			}
			// the next writer cuts the tail off before appending
			j, _, err := OpenJournal(path, cp)
			if err != nil {
				t.Fatal(err)
			}
			e := testEntry(uint64(2+n), 1, 3)
			if err := j.Append(e); err != nil {
				t.Fatal(err)
			}
			j.Close()
			c, err = ReadJournal(path, cp)
			if err != nil || c.Torn != nil || len(c.Entries) != n+1 || !sameEntry(c.Entries[n], e) {
				t.Fatalf("after an append: %d entries, torn %v, %v", len(c.Entries), c.Torn, err)
			}
			// the same damage followed by a whole record is not a tail
			b2, _ := os.ReadFile(jp)
			rec, _ := encodeRecord(testEntry(9, 1, 3))
			damaged := append(bytes.Clone(b), rec...)
			if err := os.WriteFile(jp, damaged, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = ReadJournal(path, cp)
			if !errors.Is(err, ErrJournalDamaged) || !errors.Is(err, ErrJournal) || !strings.Contains(err.Error(), "flycl repair --model "+path) {
				t.Fatalf("damage before a whole record: %v", err)
			}
			os.WriteFile(jp, b2, 0o644)
		})
	}
}

// TestForeignJournal: a journal names its model (ModelID): another
// model's journal is refused, even at the same version and CRC, by the
// loader and by ReadHistory, with a message naming flycl repair; a
// format-1 journal (no ID) is read as before.
func TestForeignJournal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.flycl")
	mine, other := NewModelID(), NewModelID()
	j, _, err := OpenJournal(path, Checkpoint{Version: 1, CRC: 2, ID: other})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Append(testEntry(2, 1, 3)); err != nil {
		t.Fatal(err)
	}
	j.Close()
	cp := Checkpoint{Version: 1, CRC: 2, ID: mine}
	_, err = ReadJournal(path, cp)
	if !errors.Is(err, ErrForeignJournal) || !strings.Contains(err.Error(), "flycl repair --model "+path) {
		t.Fatalf("another model's journal: %v", err)
	}
	if _, err := ReadHistory(path, mine); !errors.Is(err, ErrForeignJournal) {
		t.Fatalf("history of another model's journal: %v", err)
	}
	if _, _, err := OpenJournal(path, cp); !errors.Is(err, ErrForeignJournal) {
		t.Fatalf("open another model's journal: %v", err)
	}
	// a format-1 journal: header without the ID, then the same records
	b, _ := os.ReadFile(JournalPath(path))
	v1 := bytes.Clone(b[:journalHeaderV1])
	binary.LittleEndian.PutUint32(v1[8:], 1)
	v1 = append(v1, b[journalHeader:]...)
	os.WriteFile(JournalPath(path), v1, 0o644)
	c, err := ReadJournal(path, cp)
	if err != nil || len(c.Entries) != 1 || c.Torn != nil {
		t.Fatalf("format-1 journal: %+v, %v", c, err)
	}
	// a writer appends to it as it is; the next checkpoint writes it in
	// the current format, with the ID
	j, _, err = OpenJournal(path, cp)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Append(testEntry(3, 1, 3)); err != nil {
		t.Fatal(err)
	}
	j.Close()
	c, err = ReadJournal(path, cp)
	if err != nil || len(c.Entries) != 2 {
		t.Fatalf("format-1 journal appended to: %+v, %v", c, err)
	}
	cp3 := Checkpoint{Version: 3, CRC: 5, ID: mine}
	if err := ResetJournal(path, cp3); err != nil {
		t.Fatal(err)
	}
	c, err = ReadJournal(path, cp3)
	if err != nil || len(c.Entries) != 0 || c.Base.ID != mine {
		t.Fatalf("after a checkpoint: %+v, %v", c, err)
	}
	if h, err := ReadHistory(path, mine); err != nil || len(h) != 2 {
		t.Fatalf("history after a checkpoint: %d, %v", len(h), err)
	}
	cp = Checkpoint{Version: 3, CRC: 5, ID: other}
	if _, err := ReadJournal(path, cp); !errors.Is(err, ErrForeignJournal) {
		t.Fatalf("the reopened journal accepted another model: %v", err)
	}
}

// TestHistoryBound: the history a checkpoint keeps is bounded by the
// bytes its records take on disk (headers, names and calibration pools
// included), not by their features: after many small learns, each
// followed by a checkpoint (as flycl learn does), the journal holds at
// most the bound plus its header and one record.
func TestHistoryBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.flycl")
	const keep = 64 << 10
	pool := make([]float32, 1500) // ~ what a calibrated model carries
	for i := range pool {
		pool[i] = float32(i) / 7
	}
	var maxRec int64
	for v := uint64(1); v <= 120; v++ {
		cp := Checkpoint{Version: v - 1, CRC: uint32(v), ID: ModelID{1}}
		j, _, err := OpenJournal(path, cp)
		if err != nil {
			t.Fatal(err)
		}
		e := testEntry(v, 1, 4)
		e.Calibration = &JournalCalibration{Rejection: reject.Rule{Threshold: 1}, Pool: pool}
		maxRec = max(maxRec, RecordSize(e))
		if err := j.Append(e); err != nil {
			t.Fatal(err)
		}
		j.Close()
		if err := ResetJournalKeep(path, Checkpoint{Version: v, CRC: uint32(v + 1000), ID: ModelID{1}}, keep); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(JournalPath(path))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > journalHeader+keep+maxRec {
			t.Fatalf("after %d learns the journal is %d bytes, more than the bound %d + a record %d", v, fi.Size(), keep, maxRec)
		}
	}
	hist, err := ReadHistory(path, ModelID{1})
	if err != nil || len(hist) == 0 || hist[len(hist)-1].Version != 120 {
		t.Fatalf("history: %d entries, %v", len(hist), err)
	}
}

// FuzzRepairScan: flycl repair reads a damaged journal's longest valid
// prefix and lists the whole records after it: never a panic, the prefix
// within the input and ending where the ignored part starts, every
// record listed inside the input after the prefix.
func FuzzRepairScan(f *testing.F) {
	path := filepath.Join(f.TempDir(), "m.flycl")
	j, _, err := OpenJournal(path, Checkpoint{Version: 1, CRC: 2})
	if err != nil {
		f.Fatal(err)
	}
	var last int64
	for v := uint64(2); v <= 4; v++ {
		_, last = j.Len()
		j.Append(testEntry(v, 2, 3))
	}
	j.Close()
	b, _ := os.ReadFile(JournalPath(path))
	for _, torn := range tornShapes(b, int(last)) {
		f.Add(torn)
	}
	bad := bytes.Clone(b)
	bad[journalHeader+20] ^= 1
	f.Add(bad)
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytesReaderAt(b)
		size := int64(len(b))
		c, err := decodeJournal(r, size, "fuzz", nil, nil, true)
		if err != nil {
			return
		}
		if c.Valid > size || (c.Torn != nil && c.Torn.Offset != c.Valid) {
			t.Fatalf("valid %d, torn %+v of %d bytes", c.Valid, c.Torn, size)
		}
		for _, d := range wholeRecords(r, c.Valid, size) {
			if d.Offset < c.Valid || d.Offset+d.Bytes > size {
				t.Fatalf("record %+v outside [%d, %d)", d, c.Valid, size)
			}
		}
	})
}
