package modelfile

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/atomicfile"
)

// A journal makes a change to a model durable without rewriting the model
// file. The model file is then a checkpoint, and PATH.journal beside it
// holds the changes acknowledged since, each appended and synced before it
// is acknowledged:
//
//	header  "FLYCLJNL" | format uint32 | base version uint64 | base CRC-32C uint32
//	record  length uint32 | CRC-32C of payload uint32 | payload
//	payload header length uint32 | header (JSON, JournalEntry) | n×d float32 (little endian)
//
// The base is the checkpoint the journal continues: its version and the
// CRC-32C its file ends with. Loading reads the checkpoint and replays
// the entries whose version is above it. A record cut short at the end
// (a writer killed while appending: never acknowledged) is ignored, and
// cut off by the next writer; a damaged record before the end is an
// error. A checkpoint writes the model file whole and then starts a new,
// empty journal on it; a crash between the two leaves entries the new
// checkpoint already holds, which are skipped by their versions.

const (
	journalMagic  = "FLYCLJNL"
	journalFormat = 1
	journalHeader = 8 + 4 + 8 + 4
	// MaxJournalEntry bounds one entry's payload (1 GiB): a learn of more
	// than that is saved as a checkpoint instead.
	MaxJournalEntry = 1 << 30
	maxEntryHeader  = 1 << 24
)

// ErrJournal is matched (errors.Is) by every error about a damaged journal
// or one that does not continue its model file.
var ErrJournal = errors.New("modelfile: journal")

// JournalEntry is one acknowledged change of a model.
type JournalEntry struct {
	// Op is "learn", "forget" or "unlearn" (an undo: the samples of the
	// learn of version Undoes taken back out, flycl.Model.Unlearn).
	Op string `json:"op"`
	// Version is the model's version after the change.
	Version uint64 `json:"version"`
	// Time is when the change was made.
	Time time.Time `json:"time,omitzero"`
	// LambdaBefore is the model's λ before the change (0: it had no
	// classifier): what an undo of a learn re-solves with, and, for an
	// unlearn, the λ it used.
	LambdaBefore float64 `json:"lambda_before,omitempty"`
	// Undoes is the version of the learn an unlearn undid.
	Undoes uint64 `json:"undoes,omitempty"`
	// Names are the class names of the samples of a learn (one per row
	// of X), or the one class of a forget.
	Names []string `json:"names"`
	// How a learn was asked for (deploy.LearnOptions).
	Lambda       float64 `json:"lambda,omitempty"`
	Online       bool    `json:"online,omitempty"`
	Batch        int     `json:"batch,omitempty"`
	LambdaPolicy string  `json:"lambda_policy,omitempty"`
	// Calibration is, for a learn, the model's calibration of "unknown"
	// and of the probabilities before it: what an undo of the learn puts
	// back (flycl.Model.RestoreCalibration); for an unlearn, the one it
	// put back. nil in entries written before it was recorded (an undo
	// of such a learn keeps the calibration the model has).
	Calibration *JournalCalibration `json:"calibration,omitempty"`
	// D is the feature dimension of X.
	D int `json:"d"`
	// X is the n×d features of a learn, or of an exact forget (nil for a
	// forget that drops the column only).
	X []float32 `json:"-"`
}

// JournalCalibration is a model's calibration as a journal entry records
// it: its rejection and the pool of leave-one-out scores the threshold
// was taken from (flycl.Model.Rejection, CalibrationPool).
type JournalCalibration struct {
	Rejection flycl.Rejection `json:"rejection"`
	Pool      []float32       `json:"pool,omitempty"`
}

// Rows returns the number of feature rows.
func (e *JournalEntry) Rows() int {
	if e.D <= 0 {
		return 0
	}
	return len(e.X) / e.D
}

// JournalPath returns the journal of the model file at path.
func JournalPath(path string) string { return path + ".journal" }

// FileCRC returns the CRC-32C a model file ends with (before its end
// mark): it names the file's contents (a checkpoint), cheaply.
func FileCRC(path string) (uint32, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	// the file ends with the checksum and the end mark
	if fi.Size() < 12 {
		return 0, fmt.Errorf("modelfile: %s: %d bytes, too short for a model file", path, fi.Size())
	}
	var b [12]byte
	if _, err := f.ReadAt(b[:], fi.Size()-12); err != nil {
		return 0, err
	}
	if string(b[4:]) != endMark {
		return 0, fmt.Errorf("modelfile: %s: no end mark: not a whole model file", path)
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}

// ReadJournal reads the journal of the model file at path, whose
// checkpoint has version base and CRC crc, and returns the entries to
// replay on it (versions above base, in order). No journal is no entry.
// A journal that does not continue the checkpoint (another base, with
// entries above the checkpoint's version) or that is damaged before its
// end is an error wrapping ErrJournal. valid is the length of the
// journal's whole records (a writer truncates a cut-off tail to it).
func ReadJournal(path string, base uint64, crc uint32) (entries []*JournalEntry, valid int64, err error) {
	f, err := os.Open(JournalPath(path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	return DecodeJournal(bufio.NewReaderSize(f, 1<<20), fi.Size(), JournalPath(path), base, crc)
}

// DecodeJournal reads a journal of size bytes from r (name is for
// errors), as ReadJournal does.
func DecodeJournal(r io.Reader, size int64, name string, base uint64, crc uint32) ([]*JournalEntry, int64, error) {
	return decodeJournal(r, size, name, base, crc, nil)
}

// decodeJournal is DecodeJournal; history, when not nil, is also given
// every whole entry in order, those the checkpoint holds included.
func decodeJournal(r io.Reader, size int64, name string, base uint64, crc uint32, history func(*JournalEntry)) ([]*JournalEntry, int64, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w %s: %s", ErrJournal, name, fmt.Sprintf(format, a...))
	}
	if size < journalHeader {
		if size == 0 {
			return nil, 0, nil
		}
		return nil, 0, bad("%d bytes, shorter than its header", size)
	}
	var h [journalHeader]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, 0, bad("header: %v", err)
	}
	if string(h[:8]) != journalMagic {
		return nil, 0, bad("not a flycl journal")
	}
	if v := binary.LittleEndian.Uint32(h[8:]); v != journalFormat {
		return nil, 0, bad("format %d, this flycl reads %d", v, journalFormat)
	}
	jbase := binary.LittleEndian.Uint64(h[12:])
	jcrc := binary.LittleEndian.Uint32(h[20:])
	continues := jbase == base && jcrc == crc
	var out []*JournalEntry
	pos := int64(journalHeader)
	last := uint64(0) // versions only grow (history entries lie at or below the base)
	for pos < size {
		if size-pos < 8 {
			break // a cut-off record header
		}
		var rh [8]byte
		if _, err := io.ReadFull(r, rh[:]); err != nil {
			return nil, 0, bad("record at byte %d: %v", pos, err)
		}
		n := int64(binary.LittleEndian.Uint32(rh[:]))
		sum := binary.LittleEndian.Uint32(rh[4:])
		if n > MaxJournalEntry {
			return nil, 0, bad("record at byte %d claims %d bytes, more than %d", pos, n, MaxJournalEntry)
		}
		if pos+8+n > size {
			break // cut off: never acknowledged
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(r, payload); err != nil {
			return nil, 0, bad("record at byte %d: %v", pos, err)
		}
		if crc32.Checksum(payload, castagnoli) != sum {
			if pos+8+n == size {
				break // the last record, torn: never acknowledged
			}
			return nil, 0, bad("record at byte %d: checksum mismatch (the journal is damaged)", pos)
		}
		e, err := decodeEntry(payload)
		if err != nil {
			return nil, 0, bad("record at byte %d: %v", pos, err)
		}
		if e.Version <= last {
			return nil, 0, bad("record at byte %d has version %d after version %d", pos, e.Version, last)
		}
		last = e.Version
		pos += 8 + n
		if history != nil {
			history(e)
		}
		switch {
		case e.Version <= base:
			// already in the checkpoint (a crash between a checkpoint and
			// the journal's reset)
		case !continues:
			return nil, 0, bad("it continues the model version %d (CRC %08x), but the model file is version %d (CRC %08x): the model file was replaced, or written by a flycl that does not know the journal", jbase, jcrc, base, crc)
		default:
			// (an online learn is one entry over several versions: the
			// replay checks that each entry ends at its version)
			out = append(out, e)
		}
	}
	return out, pos, nil
}

func decodeEntry(p []byte) (*JournalEntry, error) {
	if len(p) < 4 {
		return nil, fmt.Errorf("payload of %d bytes", len(p))
	}
	hl := int(binary.LittleEndian.Uint32(p))
	if hl > maxEntryHeader || hl > len(p)-4 {
		return nil, fmt.Errorf("entry header of %d bytes in a payload of %d", hl, len(p))
	}
	var e JournalEntry
	dec := json.NewDecoder(bytes.NewReader(p[4 : 4+hl]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return nil, fmt.Errorf("entry header: %v", err)
	}
	data := p[4+hl:]
	switch {
	case e.Op != "learn" && e.Op != "forget" && e.Op != "unlearn":
		return nil, fmt.Errorf("unknown op %q", e.Op)
	case !(e.LambdaBefore >= 0) || math.IsInf(e.LambdaBefore, 0):
		return nil, fmt.Errorf("lambda_before %g", e.LambdaBefore)
	case e.Op == "unlearn" && (e.Undoes == 0 || e.Undoes >= e.Version):
		return nil, fmt.Errorf("an unlearn of version %d undoes version %d", e.Version, e.Undoes)
	case e.D <= 0 || e.D > MaxD:
		return nil, fmt.Errorf("feature dimension %d", e.D)
	case len(data)%(4*e.D) != 0:
		return nil, fmt.Errorf("%d bytes of features are not rows of d=%d", len(data), e.D)
	case !(e.Lambda >= 0) || math.IsInf(e.Lambda, 0) || e.Batch < 0:
		return nil, fmt.Errorf("lambda %g, batch %d", e.Lambda, e.Batch)
	case e.Calibration != nil && e.Op == "forget":
		return nil, fmt.Errorf("a forget with a calibration")
	}
	if c := e.Calibration; c != nil {
		if err := c.Rejection.Validate(); err != nil {
			return nil, fmt.Errorf("calibration: %v", err)
		}
		if len(c.Pool) > flycl.MaxCalibrationPool {
			return nil, fmt.Errorf("calibration pool of %d scores, at most %d", len(c.Pool), flycl.MaxCalibrationPool)
		}
		for i, v := range c.Pool {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("calibration pool score %d is %v", i, v)
			}
		}
	}
	n := len(data) / (4 * e.D)
	switch {
	case (e.Op == "learn" || e.Op == "unlearn") && (n == 0 || len(e.Names) != n):
		return nil, fmt.Errorf("%s of %d rows with %d names", e.Op, n, len(e.Names))
	case e.Op == "forget" && len(e.Names) != 1:
		return nil, fmt.Errorf("forget of %d classes", len(e.Names))
	}
	if n > 0 {
		e.X = make([]float32, n*e.D)
		for i := range e.X {
			e.X[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
	}
	return &e, nil
}

func encodeEntry(e *JournalEntry) ([]byte, error) {
	h, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	p := make([]byte, 4, 4+len(h)+4*len(e.X))
	binary.LittleEndian.PutUint32(p, uint32(len(h)))
	p = append(p, h...)
	return appendFloats(p, e.X), nil
}

// Journal is an open journal, for appending.
type Journal struct {
	path    string // the journal
	f       *os.File
	size    int64
	entries int    // entries above base (history not counted)
	base    uint64 // the checkpoint's version
}

// OpenJournal opens the journal of the model file at path for appending
// entries on the checkpoint (base, crc): the entries already there must
// continue it (ReadJournal, whose entries it also returns, for replay).
// A cut-off tail is truncated. No journal yet starts an empty one.
func OpenJournal(path string, base uint64, crc uint32) (*Journal, []*JournalEntry, error) {
	entries, valid, err := ReadJournal(path, base, crc)
	if err != nil {
		return nil, nil, err
	}
	jp := JournalPath(path)
	if valid > 0 && !journalContinues(jp, base, crc) {
		// A journal of an older checkpoint whose entries the checkpoint
		// holds (a writer killed between its checkpoint and the journal's
		// reset): start it anew on this checkpoint, keeping the history,
		// before anything is appended to it.
		if err := ResetJournal(path, base, crc); err != nil {
			return nil, nil, err
		}
		if entries, valid, err = ReadJournal(path, base, crc); err != nil {
			return nil, nil, err
		}
	}
	if valid == 0 {
		if err := resetJournal(jp, base, crc); err != nil {
			return nil, nil, err
		}
		valid = journalHeader
	}
	f, err := os.OpenFile(jp, os.O_RDWR, 0)
	if err != nil {
		return nil, nil, err
	}
	if err := f.Truncate(valid); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("modelfile: truncate %s: %w", jp, err)
	}
	if _, err := f.Seek(valid, io.SeekStart); err != nil {
		f.Close()
		return nil, nil, err
	}
	return &Journal{path: jp, f: f, size: valid, entries: len(entries), base: base}, entries, nil
}

// Append writes e and syncs it: once it returns nil, the change is
// durable.
func (j *Journal) Append(e *JournalEntry) error {
	rec, err := encodeRecord(e)
	if err != nil {
		return err
	}
	if _, err := j.f.WriteAt(rec, j.size); err != nil {
		j.f.Truncate(j.size) // take the partial record back out
		return fmt.Errorf("modelfile: append to %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		j.f.Truncate(j.size)
		return fmt.Errorf("modelfile: sync %s: %w", j.path, err)
	}
	j.size += int64(len(rec))
	if e.Version > j.base {
		j.entries++
	}
	return nil
}

// Len returns the entries appended since the checkpoint (history entries,
// which the checkpoint holds, not counted) and the journal's size in
// bytes.
func (j *Journal) Len() (entries int, bytes int64) { return j.entries, j.size }

// Reset starts an empty journal on a new checkpoint (base, crc), replacing
// the file atomically.
func (j *Journal) Reset(base uint64, crc uint32) error {
	if err := resetJournal(j.path, base, crc); err != nil {
		return err
	}
	f, err := os.OpenFile(j.path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	j.f.Close()
	j.f, j.size, j.entries, j.base = f, journalHeader, 0, base
	_, err = f.Seek(journalHeader, io.SeekStart)
	return err
}

// Close closes the journal file.
func (j *Journal) Close() error {
	if j == nil || j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}

// HistoryBytes bounds the history a journal keeps across checkpoints:
// the newest entries the checkpoint already holds, up to this many bytes,
// stay in the journal for undo and history (flycl undo, flycl history);
// older ones are dropped at the checkpoint.
const HistoryBytes = 64 << 20

// ResetJournal starts the journal of the model file at path anew on its
// checkpoint (base, crc), when the file has a journal: a writer that
// saves the whole model calls it after the save. The entries the
// checkpoint holds stay as history (HistoryBytes of the newest).
func ResetJournal(path string, base uint64, crc uint32) error {
	jp := JournalPath(path)
	if _, err := os.Stat(jp); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	keep, _ := ReadHistory(path) // a damaged journal keeps no history
	var size int64
	cut := len(keep)
	for cut > 0 {
		e := keep[cut-1]
		if e.Version > base {
			keep = keep[:cut-1] // not in the checkpoint: not history
			cut--
			continue
		}
		if size += int64(64 + 4*len(e.X)); size > HistoryBytes {
			break
		}
		cut--
	}
	return resetJournal(jp, base, crc, keep[cut:]...)
}

// ReadHistory returns every whole entry of the journal of the model file
// at path, history and changes since the checkpoint alike, in order (no
// journal: none).
func ReadHistory(path string) ([]*JournalEntry, error) {
	f, err := os.Open(JournalPath(path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var h [journalHeader]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		return nil, fmt.Errorf("%w %s: header: %v", ErrJournal, JournalPath(path), err)
	}
	base := binary.LittleEndian.Uint64(h[12:])
	crc := binary.LittleEndian.Uint32(h[20:])
	// read as continuing its own base, then put back what the base holds
	r := bufio.NewReaderSize(f, 1<<20)
	var all []*JournalEntry
	_, _, err = decodeJournal(r, fi.Size(), JournalPath(path), base, crc, func(e *JournalEntry) { all = append(all, e) })
	return all, err
}

func resetJournal(jp string, base uint64, crc uint32, keep ...*JournalEntry) error {
	return atomicfile.WriteFile(jp, func(w io.Writer) error {
		var h [journalHeader]byte
		copy(h[:], journalMagic)
		binary.LittleEndian.PutUint32(h[8:], journalFormat)
		binary.LittleEndian.PutUint64(h[12:], base)
		binary.LittleEndian.PutUint32(h[20:], crc)
		if _, err := w.Write(h[:]); err != nil {
			return err
		}
		for _, e := range keep {
			rec, err := encodeRecord(e)
			if err != nil {
				return err
			}
			if _, err := w.Write(rec); err != nil {
				return err
			}
		}
		return nil
	})
}

// encodeRecord frames an entry: length, CRC-32C, payload.
func encodeRecord(e *JournalEntry) ([]byte, error) {
	p, err := encodeEntry(e)
	if err != nil {
		return nil, fmt.Errorf("modelfile: journal entry: %w", err)
	}
	if len(p) > MaxJournalEntry {
		return nil, fmt.Errorf("modelfile: journal entry of %d bytes, more than %d", len(p), MaxJournalEntry)
	}
	rec := make([]byte, 8, 8+len(p))
	binary.LittleEndian.PutUint32(rec, uint32(len(p)))
	binary.LittleEndian.PutUint32(rec[4:], crc32.Checksum(p, castagnoli))
	return append(rec, p...), nil
}

// journalContinues reports whether the journal at jp says it continues
// the checkpoint (base, crc).
func journalContinues(jp string, base uint64, crc uint32) bool {
	f, err := os.Open(jp)
	if err != nil {
		return false
	}
	defer f.Close()
	var h [journalHeader]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		return false
	}
	return binary.LittleEndian.Uint64(h[12:]) == base && binary.LittleEndian.Uint32(h[20:]) == crc
}
