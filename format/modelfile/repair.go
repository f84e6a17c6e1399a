package modelfile

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/flycl/flycl/internal/atomicfile"
)

// RepairReport says what RepairJournal did.
type RepairReport struct {
	// Journal is the journal repaired; Backup the copy of it as it was
	// ("" when nothing was changed).
	Journal, Backup string
	// Action is "none" (the journal reads whole), "cut" (its longest
	// valid prefix kept) or "moved aside" (it does not belong to the
	// model file: another model's, or another checkpoint's).
	Action string
	// Reason says why (the damage found, or whose journal it is).
	Reason string
	// Kept are the entries kept, KeptBytes the journal's new length.
	Kept      int
	KeptBytes int64
	// Dropped are the whole records dropped (those found after the
	// damage, or all of a journal moved aside), DroppedBytes every byte
	// dropped.
	Dropped      []DroppedRecord
	DroppedBytes int64
}

// DroppedRecord is a change RepairJournal dropped from a journal.
type DroppedRecord struct {
	Offset, Bytes int64
	Version       uint64
	Op            string
	Rows          int
	Names         []string
}

// RepairJournal makes the journal of the model file at path readable
// again with that file, after keeping a copy of it beside it
// (PATH.journal.broken-TIME): a journal damaged before its end keeps its
// longest valid prefix (the records before the damage); a journal that
// does not continue the model file (another model's, or written on
// another checkpoint: the model file was replaced) is moved aside whole.
// The report lists every record dropped. The caller holds the model
// file's lock (TakeLock). A journal that reads whole is left as it is
// (a torn tail is cut, as the next writer would).
func RepairJournal(path string) (*RepairReport, error) {
	jp := JournalPath(path)
	rep := &RepairReport{Journal: jp, Action: "none"}
	cp, err := ReadCheckpoint(path)
	if err != nil {
		return nil, fmt.Errorf("repair: the model file cannot be read, so its journal cannot be checked against it: %w", err)
	}
	b, err := os.ReadFile(jp)
	if errors.Is(err, fs.ErrNotExist) {
		rep.Reason = "the model has no journal"
		return rep, nil
	}
	if fi, serr := os.Stat(jp); err != nil && serr == nil && fi.IsDir() {
		// a folder where the journal goes: moved aside as it is
		rep.Reason, rep.Backup = "a folder, not a journal", backupPath(jp, time.Now())
		if err := os.Rename(jp, rep.Backup); err != nil {
			return nil, fmt.Errorf("repair: move the folder %s aside: %w", jp, err)
		}
		rep.Action = "moved aside"
		return rep, nil
	}
	if err != nil {
		return nil, err
	}
	r := bytesReaderAt(b)
	size := int64(len(b))
	c, err := decodeJournal(r, size, jp, &cp, nil, false)
	backup := func() error {
		rep.Backup = backupPath(jp, time.Now())
		return atomicfile.WriteFile(rep.Backup, func(w io.Writer) error { _, err := w.Write(b); return err })
	}
	switch {
	case err == nil && c.Torn == nil:
		rep.Kept, rep.KeptBytes = len(c.Entries), size
		rep.Reason = "the journal reads whole"
		return rep, nil
	case err == nil || errors.Is(err, ErrJournalDamaged):
		// keep the longest valid prefix
		pc, perr := decodeJournal(r, size, jp, &cp, nil, true)
		if perr != nil {
			return nil, perr
		}
		if err == nil {
			rep.Reason = c.Torn.String()
		} else {
			rep.Reason = fmt.Sprintf("damage at byte %d: %s%s", pc.Torn.Offset, pc.Torn.Reason, damagedRecord(b, pc.Torn.Offset))
		}
		if err := backup(); err != nil {
			return nil, err
		}
		rep.Action, rep.Kept, rep.KeptBytes, rep.DroppedBytes = "cut", len(pc.Entries), pc.Valid, size-pc.Valid
		rep.Dropped = wholeRecords(r, pc.Valid, size)
		if err := atomicfile.WriteFile(jp, func(w io.Writer) error { _, err := w.Write(b[:pc.Valid]); return err }); err != nil {
			return nil, err
		}
		return rep, nil
	case errors.Is(err, ErrJournal):
		// another model's, another checkpoint's, or not a journal: move it
		// aside whole (the model file is used as it is)
		rep.Reason = err.Error()
		if err := backup(); err != nil {
			return nil, err
		}
		if err := os.Remove(jp); err != nil {
			return nil, err
		}
		rep.Action, rep.DroppedBytes = "moved aside", size
		if _, _, hlen, herr := journalHeaderOf(r, size); herr == nil {
			rep.Dropped = wholeRecords(r, hlen, size)
		}
		return rep, nil
	}
	return nil, err
}

// damagedRecord names the change a damaged record at off was, when its
// entry header still reads (its checksum or data do not): ", the record
// of version N (a learn of 8 samples)", or "" when nothing of it reads.
func damagedRecord(b []byte, off int64) string {
	if off < 0 || int64(len(b))-off < 12 {
		return ""
	}
	p := b[off+8:]
	if n := int64(binary.LittleEndian.Uint32(b[off:])); n < int64(len(p)) {
		p = p[:n]
	}
	hl := int64(binary.LittleEndian.Uint32(p))
	if hl > maxEntryHeader || hl > int64(len(p))-4 {
		return ""
	}
	var h struct {
		Op      string `json:"op"`
		Version uint64 `json:"version"`
	}
	if json.Unmarshal(p[4:4+hl], &h) != nil || h.Version == 0 || h.Op == "" {
		return ""
	}
	op := h.Op
	if op == "unlearn" {
		op = "undo"
	}
	return fmt.Sprintf(" (the record of version %d, a %s, by what of its header still reads)", h.Version, op)
}

// backupPath is the name of a copy of the journal jp kept at time t:
// jp.broken-TIME, or jp.broken-TIME-N when repairs within one second have
// kept copies already (a copy is never written over; the caller holds the
// model file's lock, so no other repair picks the same name).
func backupPath(jp string, t time.Time) string {
	base := fmt.Sprintf("%s.broken-%s", jp, t.UTC().Format("20060102T150405Z"))
	name := base
	for n := 2; ; n++ {
		if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			return name
		}
		name = fmt.Sprintf("%s-%d", base, n)
	}
}

// wholeRecords lists the whole records (checksum right, entry decodes)
// found from byte from on.
func wholeRecords(r io.ReaderAt, from, size int64) []DroppedRecord {
	var out []DroppedRecord
	for from < size {
		at := nextRecord(r, from, size)
		if at < 0 {
			break
		}
		var h [8]byte
		r.ReadAt(h[:], at)
		n := int64(h[0]) | int64(h[1])<<8 | int64(h[2])<<16 | int64(h[3])<<24
		p := make([]byte, n)
		r.ReadAt(p, at+8)
		d := DroppedRecord{Offset: at, Bytes: 8 + n}
		if e, err := decodeEntry(p); err == nil {
			d.Version, d.Op, d.Rows, d.Names = e.Version, e.Op, e.Rows(), distinct(e.Names)
		}
		out = append(out, d)
		from = at + 8 + n
	}
	return out
}

func distinct(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// bytesReaderAt reads a byte slice at offsets.
type bytesReaderAt []byte

func (b bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(b)) {
		return 0, io.EOF
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
