package modelfile

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/flycl/flycl/internal/atomicfile"
	"github.com/flycl/flycl/internal/onejson"
	"github.com/flycl/flycl/reject"
)

// A journal makes a change to a model durable without rewriting the model
// file. The model file is then a checkpoint, and PATH.journal beside it
// holds the changes acknowledged since, each appended and synced before it
// is acknowledged:
//
//	header  "FLYCLJNL" | format uint32 | base version uint64 | base CRC-32C uint32 | model ID [16]byte
//	record  length uint32 | CRC-32C of payload uint32 | payload
//	payload header length uint32 | header (JSON, JournalEntry) | n×d float32 (little endian)
//
// The base is the checkpoint the journal continues: its version, the
// CRC-32C its file ends with and the model's ID (format 1 has no ID).
// Loading reads the checkpoint and replays the entries whose version is
// above it; a journal of another model (another ID) is refused. A torn
// tail (a writer killed or the power lost while appending: never
// acknowledged; a partial record, a length past the end, zero bytes) is
// ignored, and cut off by the next writer; a damaged record with a whole
// one after it is an error (ErrJournalDamaged; RepairJournal keeps the
// records before it). A checkpoint writes the model file whole and then starts a new,
// empty journal on it; a crash between the two leaves entries the new
// checkpoint already holds, which are skipped by their versions.

const (
	journalMagic = "FLYCLJNL"
	// journalFormat is the journal format written: 2 adds the model's ID
	// to format 1's header (both are read).
	journalFormat   = 2
	journalHeaderV1 = 8 + 4 + 8 + 4
	journalHeader   = journalHeaderV1 + 16
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
	// Op is "learn", "forget", "unlearn" (an undo: the samples of the
	// learn of version Undoes taken back out, flycl.Model.Unlearn) or
	// "merge" (statistics learned by flycl merge: history only, with the
	// classes it taught in Names and no features; it is always saved as
	// a checkpoint, and an undo does not reach past it).
	Op string `json:"op"`
	// Version is the model's version after the change.
	Version uint64 `json:"version"`
	// VersionBefore is the model's version before the change (0 in
	// entries written before it was recorded, and for a model's first
	// change): a history whose entry does not start where the one before
	// it ended has a gap (a record lost to a journal cut or damage), and
	// an undo does not reach past it.
	VersionBefore uint64 `json:"version_before,omitempty"`
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
	// back (codec.RestoreCalibration); for an unlearn, the one it
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
	Rejection reject.Rule `json:"rejection"`
	Pool      []float32   `json:"pool,omitempty"`
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

// ModelID names a model across its checkpoints: 128 random bits drawn
// when the model file is first written (Encode), kept by every later
// save, and written into its journal's header, so that a journal is
// never replayed on another model's file. The zero ID is unknown (files
// and journals written before it was recorded).
type ModelID [16]byte

// NewModelID draws a random ModelID.
func NewModelID() ModelID {
	var id ModelID
	if _, err := rand.Read(id[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return id
}

// IsZero reports whether id is unknown.
func (id ModelID) IsZero() bool { return id == ModelID{} }

func (id ModelID) String() string {
	if id.IsZero() {
		return "unknown"
	}
	return hex.EncodeToString(id[:])
}

// parseModelID reads the hex form of a ModelID ("" is the zero ID).
func parseModelID(s string) (ModelID, error) {
	var id ModelID
	if s == "" {
		return id, nil
	}
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(id) {
		return id, fmt.Errorf("model id %q: want %d hex digits", s, 2*len(id))
	}
	copy(id[:], b)
	if id.IsZero() {
		return id, fmt.Errorf("model id %q is zero", s)
	}
	return id, nil
}

// Checkpoint names the model file a journal continues: its version, the
// CRC-32C it ends with, and the model's ID.
type Checkpoint struct {
	Version uint64
	CRC     uint32
	ID      ModelID
}

// ErrForeignJournal is matched (errors.Is) by the error for a journal of
// another model (its ModelID differs from the model file's).
var ErrForeignJournal = errors.New("modelfile: the journal belongs to another model")

// ErrJournalDamaged is matched (errors.Is) by the error for a journal
// with a damaged record before its last whole one (not a torn tail):
// flycl repair keeps the records before it.
var ErrJournalDamaged = errors.New("modelfile: the journal is damaged")

// TornTail describes the end of a journal that was ignored: what a crash
// or power loss leaves of a write never acknowledged (a partial record,
// a length that runs past the end, a zero-filled block).
type TornTail struct {
	Offset int64  // where it starts
	Bytes  int64  // how long it is
	Reason string // what was found there
}

func (t *TornTail) String() string {
	return fmt.Sprintf("ignored %d bytes at the end of the journal from byte %d (%s): a write cut short by a crash, never acknowledged; the next change cuts them off", t.Bytes, t.Offset, t.Reason)
}

// JournalContents is what a journal holds, as ReadJournal reads it.
type JournalContents struct {
	// Entries are the changes to replay on the checkpoint, in order.
	Entries []*JournalEntry
	// Valid is the length of the journal's whole records (a writer
	// truncates a torn tail to it); Pending the bytes of the records of
	// Entries.
	Valid, Pending int64
	// Torn is the ignored tail, nil when there is none.
	Torn *TornTail
	// Header: the checkpoint the journal says it continues.
	Base Checkpoint
}

// ReadJournal reads the journal of the model file at path, whose
// checkpoint is cp, and returns the entries to replay on it (versions
// above cp.Version, in order). No journal is no entry. A journal that
// does not continue the checkpoint (another model's, or another base with
// entries above the checkpoint's version) or that is damaged before its
// end is an error wrapping ErrJournal; a torn tail is ignored (Torn).
func ReadJournal(path string, cp Checkpoint) (*JournalContents, error) {
	f, err := os.Open(JournalPath(path))
	if errors.Is(err, fs.ErrNotExist) {
		return &JournalContents{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return DecodeJournal(f, fi.Size(), JournalPath(path), cp)
}

// DecodeJournal reads a journal of size bytes from r (name is for
// errors), as ReadJournal does.
func DecodeJournal(r io.ReaderAt, size int64, name string, cp Checkpoint) (*JournalContents, error) {
	return decodeJournal(r, size, name, &cp, nil, false)
}

// journalHeaderOf reads a journal's header: its format, its checkpoint
// and the header's length.
func journalHeaderOf(r io.ReaderAt, size int64) (format int, base Checkpoint, hlen int64, err error) {
	if size < journalHeaderV1 {
		return 0, base, 0, fmt.Errorf("%d bytes, shorter than its header", size)
	}
	var h [journalHeader]byte
	n := int64(journalHeaderV1)
	if size >= journalHeader {
		n = journalHeader
	}
	if _, err := r.ReadAt(h[:n], 0); err != nil {
		return 0, base, 0, fmt.Errorf("header: %v", err)
	}
	if string(h[:8]) != journalMagic {
		return 0, base, 0, fmt.Errorf("not a flycl journal")
	}
	format = int(binary.LittleEndian.Uint32(h[8:]))
	base.Version = binary.LittleEndian.Uint64(h[12:])
	base.CRC = binary.LittleEndian.Uint32(h[20:])
	switch format {
	case 1:
		return format, base, journalHeaderV1, nil
	case journalFormat:
		if n < journalHeader {
			return 0, base, 0, fmt.Errorf("%d bytes, shorter than its header", size)
		}
		copy(base.ID[:], h[journalHeaderV1:])
		return format, base, journalHeader, nil
	}
	return 0, base, 0, fmt.Errorf("format %d, this flycl reads 1 and %d", format, journalFormat)
}

// modelOf returns the model file of a journal's path (for messages).
func modelOf(name string) string { return strings.TrimSuffix(name, ".journal") }

// decodeJournal is DecodeJournal; cp nil reads the journal as continuing
// its own checkpoint; history, when not nil, is also given every whole
// entry in order, those the checkpoint holds included.
//
// With prefix, damage ends the read as a torn tail does (Torn names it):
// the longest valid prefix, for RepairJournal.
//
// saved is the version of the model file (0: cp's): a merge record above
// it is a merge never saved (see below).
func decodeJournal(r io.ReaderAt, size int64, name string, cp *Checkpoint, history func(*JournalEntry), prefix bool, saved ...uint64) (*JournalContents, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w %s: %s", ErrJournal, name, fmt.Sprintf(format, a...))
	}
	out := &JournalContents{}
	if size == 0 {
		// what a crash leaves of a journal being created (or a file
		// emptied): no header, no change; noticed, and started anew by
		// the next writer
		out.Torn = &TornTail{Reason: "an empty file, without even its header"}
		return out, nil
	}
	_, jb, hlen, err := journalHeaderOf(r, size)
	if err != nil {
		return nil, bad("%v (move it aside, or run flycl repair --model %s, to use the model file without it)", err, modelOf(name))
	}
	out.Base = jb
	if cp == nil {
		cp = &jb
	}
	if !jb.ID.IsZero() && !cp.ID.IsZero() && jb.ID != cp.ID {
		return nil, fmt.Errorf("%w: %w %s is the journal of the model %s, but the model file %s is the model %s (it was replaced by another model's file, or the journal was copied from another): put back the model file it belongs to, or run flycl repair --model %s to move the journal aside (keeping a copy) and use the model file as it is",
			ErrForeignJournal, ErrJournal, name, jb.ID, modelOf(name), cp.ID, modelOf(name))
	}
	continues := jb.Version == cp.Version && jb.CRC == cp.CRC
	mergeSaved := cp.Version
	if len(saved) > 0 && saved[0] > mergeSaved {
		mergeSaved = saved[0]
	}
	sr := io.NewSectionReader(r, 0, size)
	br := bufio.NewReaderSize(sr, 1<<20)
	if _, err := br.Discard(int(hlen)); err != nil {
		return nil, bad("header: %v", err)
	}
	pos := hlen
	last := uint64(0) // versions only grow (history entries lie at or below the base)
	// torn reports a record that does not read whole at pos: the tail of
	// a write cut short when no whole record follows it, else damage.
	torn := func(reason string) error {
		if next := nextRecord(r, pos+1, size); next >= 0 && !prefix {
			return fmt.Errorf("%w: %w %s: record at byte %d: %s, and a whole record follows at byte %d: the journal is damaged before its end, so the changes after the damage cannot be replayed; run flycl repair --model %s to keep the records before it (it keeps a copy of the journal and lists what it drops)",
				ErrJournalDamaged, ErrJournal, name, pos, reason, next, modelOf(name))
		}
		out.Torn = &TornTail{Offset: pos, Bytes: size - pos, Reason: reason}
		return nil
	}
	for pos < size {
		if size-pos < 8 {
			if err := torn("a partial record header"); err != nil {
				return nil, err
			}
			break
		}
		var rh [8]byte
		if _, err := io.ReadFull(br, rh[:]); err != nil {
			return nil, bad("record at byte %d: %v", pos, err)
		}
		n := int64(binary.LittleEndian.Uint32(rh[:]))
		sum := binary.LittleEndian.Uint32(rh[4:])
		reason := ""
		switch {
		case n == 0 && sum == 0 && allZero(r, pos, size):
			reason = "zero bytes"
		case n == 0:
			reason = "a record of 0 bytes"
		case n > MaxJournalEntry:
			reason = fmt.Sprintf("a length of %d bytes, more than %d", n, MaxJournalEntry)
		case pos+8+n > size:
			reason = fmt.Sprintf("a length of %d bytes, past the end (%d bytes follow)", n, size-pos-8)
		}
		if reason != "" {
			if err := torn(reason); err != nil {
				return nil, err
			}
			break
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(br, payload); err != nil {
			return nil, bad("record at byte %d: %v", pos, err)
		}
		if crc32.Checksum(payload, castagnoli) != sum {
			if err := torn("a checksum mismatch"); err != nil {
				return nil, err
			}
			break
		}
		e, err := decodeEntry(payload)
		if err != nil && prefix {
			out.Torn = &TornTail{Offset: pos, Bytes: size - pos, Reason: "a record that does not decode: " + err.Error()}
			break
		}
		if err != nil {
			return nil, bad("record at byte %d: %v (run flycl repair --model %s to keep the records before it)", pos, err, modelOf(name))
		}
		if e.Version <= last && prefix {
			out.Torn = &TornTail{Offset: pos, Bytes: size - pos, Reason: fmt.Sprintf("a record of version %d after version %d", e.Version, last)}
			break
		}
		if e.Version <= last {
			return nil, bad("record at byte %d has version %d after version %d (run flycl repair --model %s to keep the records before it)", pos, e.Version, last, modelOf(name))
		}
		last = e.Version
		pos += 8 + n
		switch {
		case e.Version <= cp.Version:
			// already in the checkpoint (a crash between a checkpoint and
			// the journal's reset)
		case e.Op == "merge" && e.Version > mergeSaved:
			// A merge is saved whole, never replayed: its record is
			// written first and the model file saved after it, so a
			// record above the model file is a merge whose save never
			// happened (a writer stopped between the two). It was never
			// acknowledged, and is not in the model: it is dropped (as a
			// torn tail, which the next writer cuts off) when it is the
			// last record, else the journal is damaged.
			start := pos - 8 - n
			if pos < size && !prefix {
				return nil, fmt.Errorf("%w: %w %s: the merge of version %d at byte %d is above the model file (version %d), and records follow it; run flycl repair --model %s to keep the records before it",
					ErrJournalDamaged, ErrJournal, name, e.Version, start, mergeSaved, modelOf(name))
			}
			out.Torn = &TornTail{Offset: start, Bytes: size - start, Reason: fmt.Sprintf("the record of a merge (version %d) whose model file was never saved", e.Version)}
			out.Valid = start
			return out, nil
		case !continues:
			return nil, bad("it continues the model version %d (CRC %08x), but the model file is version %d (CRC %08x): the model file was replaced (a copy, a restore from backup), or written by a flycl that does not know the journal; put back the model file it continues, or run flycl repair --model %s to move the journal aside (keeping a copy) and use the model file as it is",
				jb.Version, jb.CRC, cp.Version, cp.CRC, modelOf(name))
		default:
			// (an online learn is one entry over several versions: the
			// replay checks that each entry ends at its version)
			out.Entries = append(out.Entries, e)
			out.Pending += 8 + n
		}
		if history != nil {
			history(e)
		}
	}
	out.Valid = pos
	return out, nil
}

// allZero reports whether bytes [from, size) of r are all zero.
func allZero(r io.ReaderAt, from, size int64) bool {
	buf := make([]byte, 64<<10)
	for from < size {
		n := int64(len(buf))
		if size-from < n {
			n = size - from
		}
		if _, err := r.ReadAt(buf[:n], from); err != nil {
			return false
		}
		for _, c := range buf[:n] {
			if c != 0 {
				return false
			}
		}
		from += n
	}
	return true
}

// maxRecordScan bounds the bytes nextRecord checksums looking for a whole
// record after a damaged one; past it the damage is taken to be in the
// middle (refused, with flycl repair the way out), never silently a tail.
const maxRecordScan = 1 << 30

// nextRecord returns the offset of the first whole record (its length
// fits, its checksum matches) at or after from, or -1 when there is none.
func nextRecord(r io.ReaderAt, from, size int64) int64 {
	if size-from < 12 {
		return -1
	}
	tail := make([]byte, size-from)
	if _, err := r.ReadAt(tail, from); err != nil && !errors.Is(err, io.EOF) {
		return -1
	}
	var scanned int64
	for i := 0; i+12 <= len(tail); i++ {
		n := int64(binary.LittleEndian.Uint32(tail[i:]))
		if n < 4 || n > int64(len(tail)-i-8) {
			continue
		}
		if scanned += n; scanned > maxRecordScan {
			return from + int64(i)
		}
		if crc32.Checksum(tail[i+8:int64(i)+8+n], castagnoli) == binary.LittleEndian.Uint32(tail[i+4:]) {
			if _, err := decodeEntry(tail[i+8 : int64(i)+8+n]); err == nil {
				return from + int64(i)
			}
		}
	}
	return -1
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
	if err := onejson.Decode(dec, &e); err != nil {
		return nil, fmt.Errorf("entry header: %v", err)
	}
	data := p[4+hl:]
	switch {
	case e.Op != "learn" && e.Op != "forget" && e.Op != "unlearn" && e.Op != "merge":
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
	case e.Calibration != nil && (e.Op == "forget" || e.Op == "merge"):
		return nil, fmt.Errorf("a %s with a calibration", e.Op)
	}
	if c := e.Calibration; c != nil {
		if err := c.Rejection.Validate(); err != nil {
			return nil, fmt.Errorf("calibration: %v", err)
		}
		if len(c.Pool) > reject.MaxCalibrationPool {
			return nil, fmt.Errorf("calibration pool of %d scores, at most %d", len(c.Pool), reject.MaxCalibrationPool)
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
	case e.Op == "merge" && n != 0:
		return nil, fmt.Errorf("a merge with %d feature rows", n)
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
	// mu guards the file and its size: Check may be called from any
	// goroutine while another appends.
	mu      sync.Mutex
	path    string // the journal
	f       *os.File
	size    int64
	entries int        // entries above the checkpoint (history not counted)
	pending int64      // their bytes
	cp      Checkpoint // the checkpoint it continues
	// sum is the CRC-32C of the journal's bytes as this writer made them
	// (all size of them); Check reads the file back against it. verified
	// is the file's modification time when it last matched, and when
	// that was: a file not modified since, checked long enough after its
	// modification that no write can share that time stamp, matches
	// without being read again.
	sum        uint32
	verifiedMT time.Time
	verifiedAt time.Time
}

// contentGrace is how long after a file's modification time a match of
// its content is taken to cover every write with that time stamp (the
// kernel stamps writes with a clock that ticks every few milliseconds).
const contentGrace = time.Second

// crcOf returns the CRC-32C of bytes [0, size) of f.
func crcOf(f *os.File, size int64) (uint32, error) {
	h := crc32.New(castagnoli)
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, size)); err != nil {
		return 0, err
	}
	return h.Sum32(), nil
}

// OpenJournal opens the journal of the model file at path for appending
// entries on the checkpoint cp: the entries already there must continue
// it (ReadJournal, whose contents it also returns, for replay). A torn
// tail is truncated. No journal yet starts an empty one.
func OpenJournal(path string, cp Checkpoint) (*Journal, *JournalContents, error) {
	c, err := ReadJournal(path, cp)
	if err != nil {
		return nil, nil, err
	}
	jp := JournalPath(path)
	if c.Valid > 0 && (c.Base.Version != cp.Version || c.Base.CRC != cp.CRC) {
		// A journal of an older checkpoint whose entries the checkpoint
		// holds (a writer killed between its checkpoint and the journal's
		// reset): start it anew on this checkpoint, keeping the history,
		// before anything is appended to it. (A journal of this checkpoint
		// written before IDs is appended to as it is: the next checkpoint
		// writes it anew, with the ID.)
		if err := ResetJournal(path, cp); err != nil {
			return nil, nil, err
		}
		if c, err = ReadJournal(path, cp); err != nil {
			return nil, nil, err
		}
	}
	valid := c.Valid
	if valid == 0 {
		if err := resetJournal(jp, cp); err != nil {
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
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("modelfile: sync %s: %w", jp, err)
	}
	sum, err := crcOf(f, valid)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("modelfile: read %s: %w", jp, err)
	}
	j := &Journal{path: jp, f: f, size: valid, entries: len(c.Entries), pending: c.Pending, cp: cp, sum: sum}
	return j, c, nil
}

// ErrJournalChanged is matched (errors.Is) by the error of Check for a
// journal removed, replaced, truncated or written by another program
// while a writer had it open.
var ErrJournalChanged = errors.New("modelfile: the journal was changed behind its writer")

// Check reports whether the journal's path still names the open file and
// it holds the bytes this writer made it of: as long, and with the same
// CRC-32C (the writer keeps a running one of what it wrote, and reads the
// file back against it; a file not modified since it last matched is not
// read again, see contentGrace): nil, or an error wrapping
// ErrJournalChanged saying what happened. A writer calls it before every
// append and acknowledgement: appending to a journal that was removed,
// replaced, cut or written to would acknowledge changes no load will see.
// Its cost is a read of the journal after each write, which its bounds
// (the records since the checkpoint, and the history a checkpoint keeps:
// no more than the model file) keep within the cost of reading the model
// file.
func (j *Journal) Check() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return fmt.Errorf("%w: %s is closed", ErrJournalChanged, j.path)
	}
	mine, err := j.f.Stat()
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrJournalChanged, j.path, err)
	}
	what := ""
	cur, err := os.Lstat(j.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		what = "removed"
	case err != nil:
		what = "made unreadable (" + err.Error() + ")"
	case !os.SameFile(mine, cur):
		what = "replaced by another file"
	case mine.Size() != j.size:
		what = fmt.Sprintf("cut or written to (%d bytes; this writer wrote %d)", mine.Size(), j.size)
	case mine.ModTime().Equal(j.verifiedMT) && j.verifiedAt.Sub(j.verifiedMT) > contentGrace:
		// not modified since its content last matched
	default:
		sum, err := crcOf(j.f, j.size)
		switch {
		case err != nil:
			what = "made unreadable (" + err.Error() + ")"
		case sum != j.sum:
			what = fmt.Sprintf("written to (its %d bytes are the size this writer made them, but their CRC-32C is %08x, not %08x)", j.size, sum, j.sum)
		default:
			j.verifiedMT, j.verifiedAt = mine.ModTime(), time.Now()
		}
	}
	if what == "" {
		return nil
	}
	return fmt.Errorf("%w: the journal %s was %s by another program while this writer held it: the changes it acknowledged since the last checkpoint may be gone from it, so it stops changing the model; restart it to load the model file and what its journal holds now (restore the journal from a backup first if you have one)",
		ErrJournalChanged, j.path, what)
}

// Append writes e and syncs it: once it returns nil, the change is
// durable.
func (j *Journal) Append(e *JournalEntry) error {
	rec, err := encodeRecord(e)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.WriteAt(rec, j.size); err != nil {
		j.f.Truncate(j.size) // take the partial record back out
		return fmt.Errorf("modelfile: append to %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		j.f.Truncate(j.size)
		return fmt.Errorf("modelfile: sync %s: %w", j.path, err)
	}
	j.size += int64(len(rec))
	j.sum = crc32.Update(j.sum, castagnoli, rec)
	if e.Version > j.cp.Version {
		j.entries++
		j.pending += int64(len(rec))
	}
	return nil
}

// Drop takes back the records appended from byte size on (Size before
// an Append): a writer whose change could not be completed after its
// record was written calls it, so that no load replays a change it
// refused. The journal is synced after the cut.
func (j *Journal) Drop(size int64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil || size > j.size || size < journalHeaderV1 {
		return fmt.Errorf("modelfile: drop %s back to byte %d: not a size this writer gave", j.path, size)
	}
	if err := j.f.Truncate(size); err != nil {
		return fmt.Errorf("modelfile: drop the last record of %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("modelfile: drop the last record of %s: %w", j.path, err)
	}
	sum, err := crcOf(j.f, size)
	if err != nil {
		return fmt.Errorf("modelfile: drop the last record of %s: %w", j.path, err)
	}
	j.size, j.sum = size, sum
	return nil
}

// Size returns the journal's size in bytes, as this writer made it.
func (j *Journal) Size() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.size
}

// Len returns the entries appended since the checkpoint (history entries,
// which the checkpoint holds, not counted) and the journal's size in
// bytes.
func (j *Journal) Len() (entries int, bytes int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.entries, j.size
}

// Pending returns the bytes of the records appended since the checkpoint
// (what a checkpoint policy counts: the history before it is not).
func (j *Journal) Pending() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.pending
}

// Close closes the journal file.
func (j *Journal) Close() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}

// HistoryBytes bounds the history a journal keeps across checkpoints:
// the newest entries the checkpoint already holds, up to this many bytes
// of records (their headers, names and calibration pools included), stay
// in the journal for undo and history (flycl undo, flycl history); older
// ones are dropped at the checkpoint.
const HistoryBytes = 64 << 20

// RecordSize returns the bytes e takes in a journal: its whole record.
func RecordSize(e *JournalEntry) int64 {
	h, err := json.Marshal(e)
	if err != nil {
		return 0
	}
	return 8 + 4 + int64(len(h)) + 4*int64(len(e.X))
}

// ResetJournal starts the journal of the model file at path anew on its
// checkpoint cp, when the file has a journal: a writer that saves the
// whole model calls it after the save. The entries the checkpoint holds
// stay as history (HistoryBytes of the newest records).
func ResetJournal(path string, cp Checkpoint) error {
	return ResetJournalKeep(path, cp, HistoryBytes)
}

// ResetJournalKeep is ResetJournal keeping at most keep bytes of history
// records.
func ResetJournalKeep(path string, cp Checkpoint, keep int64) error {
	jp := JournalPath(path)
	if _, err := os.Stat(jp); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	hist, _ := ReadHistory(path, cp.ID) // a damaged or foreign journal keeps no history
	var size int64
	cut := len(hist)
	for cut > 0 {
		e := hist[cut-1]
		if e.Version > cp.Version {
			hist = hist[:cut-1] // not in the checkpoint: not history
			cut--
			continue
		}
		if size += RecordSize(e); size > keep {
			break
		}
		cut--
	}
	return resetJournal(jp, cp, hist[cut:]...)
}

// ReadHistory returns every whole entry of the journal of the model file
// at path, history and changes since the checkpoint alike, in order (no
// journal: none). id is the model's (ErrForeignJournal when the journal
// names another; the zero ID checks nothing).
func ReadHistory(path string, id ModelID) ([]*JournalEntry, error) {
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
	var all []*JournalEntry
	// read as continuing its own checkpoint, then put back what it holds
	cp := (*Checkpoint)(nil)
	if !id.IsZero() {
		if _, jb, _, err := journalHeaderOf(f, fi.Size()); err == nil {
			jb.ID = id
			cp = &jb
		}
	}
	// a merge's record above the model file is one never saved: not history
	var saved uint64
	if fc, err := ReadCheckpoint(path); err == nil {
		saved = fc.Version
	}
	_, err = decodeJournal(f, fi.Size(), JournalPath(path), cp, func(e *JournalEntry) { all = append(all, e) }, false, saved)
	return all, err
}

func resetJournal(jp string, cp Checkpoint, keep ...*JournalEntry) error {
	return atomicfile.WriteFile(jp, func(w io.Writer) error {
		var h [journalHeader]byte
		copy(h[:], journalMagic)
		binary.LittleEndian.PutUint32(h[8:], journalFormat)
		binary.LittleEndian.PutUint64(h[12:], cp.Version)
		binary.LittleEndian.PutUint32(h[20:], cp.CRC)
		copy(h[journalHeaderV1:], cp.ID[:])
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
