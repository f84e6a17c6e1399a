package modelfile

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/atomicfile"
	"github.com/flycl/flycl/internal/codec"
	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/reject"
	"github.com/flycl/flycl/ridge"
)

const (
	magic   = "FLYCLMDL"
	endMark = "FLYCLEND"
	// Version is the newest format version this package writes: a model
	// in the dual form (flycl.Config.Dual) is written as version 5, which
	// holds the samples' sparse codes instead of G; a model in the primal
	// form is written as version 4 (PrimalVersion), readable by builds
	// before the dual form. Decode reads versions 1 to 5 (files before 3
	// hold no rejection: it is off; files before 4 fingerprint W by a
	// CRC-32C, w_crc32c, instead of its Digest, w_sha256).
	Version = 5
	// PrimalVersion is the version a model in the primal form is written as.
	PrimalVersion = 4
	// maxHeader bounds the JSON header (the class map and history of a
	// very long run fit easily).
	maxHeader = 64 << 20

	// Bounds on what a header may describe, checked before anything is
	// allocated. They are far above any real model.
	MaxM       = 1 << 17 // expansion dimension (G alone is 32 GiB at this m)
	MaxD       = 1 << 16 // feature dimension (regenerating W costs m·d steps)
	MaxClasses = 1 << 20
	// A dual form holds at most MaxDualRows samples and MaxDualNonZeros
	// non-zeros in all (2 GiB of codes).
	MaxDualRows     = 1 << 20
	MaxDualNonZeros = 1 << 28
	// W's entries (m·p) may not exceed max(m(m+1), minWEntries): W is at
	// most about twice the size of G, which is in the file.
	minWEntries = 1 << 24
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// File is the content of a model file: the model and how its features are
// made.
type File struct {
	// Snapshot is the model (see flycl.Snapshot: Model for a mutable copy
	// to learn with, Predictor to classify).
	Snapshot *flycl.Snapshot
	// Pipeline says how to turn an image into the model's features; nil
	// for a model learned from feature vectors only.
	Pipeline *Pipeline
	// Created is when the model was first saved; Saved when this file
	// was written (set by Encode). Both UTC.
	Created, Saved time.Time
	// Format is the format version the file was read from (Decode).
	Format int
	// CRC is the CRC-32C the file ends with (Decode): it names these
	// contents, as the checkpoint a journal continues.
	CRC uint32
	// ID names the model across its saves (ModelID): drawn by Encode when
	// zero, kept after. Zero when read from a file written before it was
	// recorded.
	ID ModelID
	// Warnings are what a load noticed and ignored (a torn journal tail:
	// store.LoadFile), for the caller to show; never written.
	Warnings []string
}

// Checkpoint returns the checkpoint the file is, for its journal.
func (f *File) Checkpoint() Checkpoint {
	return Checkpoint{Version: f.Snapshot.Version(), CRC: f.CRC, ID: f.ID}
}

// Header is the JSON header of a model file.
type Header struct {
	Format   string `json:"format"` // "flycl-model"
	InputDim int    `json:"d"`
	// Config is the model's configuration, under the keys every format
	// version has written (m, p, k, seed, topk, lambdas, gcv, projection;
	// gcv_scope and lambda_scale when not the default).
	flycl.Config
	W       string    `json:"w"`                  // "seed" or "explicit"
	WSHA256 string    `json:"w_sha256,omitempty"` // fingerprint of W (projection.Matrix.Digest)
	WCRC    uint32    `json:"w_crc32c,omitempty"` // fingerprint of W in files before version 4 (legacyCRC)
	Labels  []int     `json:"labels"`             // class index -> label
	Samples int       `json:"samples"`            // samples in G
	Lambda  float64   `json:"lambda"`             // λ of the stored classifier
	Coef    bool      `json:"coef"`               // classifier stored
	History []Record  `json:"history"`            // one per learning step
	Saved   time.Time `json:"saved"`              // when the file was written
	Backend string    `json:"linalg,omitempty"`

	// Version 2:
	ModelVersion uint64    `json:"model_version"`      // increases with every change
	Names        []string  `json:"names"`              // class index -> name
	Counts       []*int    `json:"counts"`             // class index -> samples learned (null: unknown, from a version-1 file)
	Created      time.Time `json:"created"`            // when the model was first saved
	Pipeline     *Pipeline `json:"pipeline,omitempty"` // backbone and transform

	// ID names the model across its saves (ModelID, in hex; absent in
	// files written before it was recorded).
	ID string `json:"id,omitempty"`

	// Optional (absent: inputs unscaled):
	InputScale float64 `json:"input_scale,omitempty"` // power of two the inputs are multiplied by

	// Version 3 (absent: rejection off, probabilities not calibrated):
	Rejection *reject.Rule `json:"rejection,omitempty"` // when a prediction is "unknown"; the probabilities' temperature
	// recent leave-one-out scores the rejection threshold is taken from, newest first
	CalibrationPool []float32 `json:"calibration_pool,omitempty"`

	// Version 5, a model in the dual form (absent: the primal form, G and
	// S in the data). The data then holds, instead of G and S, each
	// sample's class index (int32, -1: none) and number of non-zeros
	// (int32), then all the non-zeros' columns (int32, ascending within a
	// sample) and values (float32), sample after sample.
	Form         string `json:"form,omitempty"`          // "dual"
	DualRows     int    `json:"dual_rows,omitempty"`     // samples held
	DualNonZeros int    `json:"dual_nonzeros,omitempty"` // their non-zeros in all
	// where the last continuous GCV choice fell (flycl.State.LambdaLimit)
	LambdaLimit string `json:"lambda_limit,omitempty"`
}

// Record is a TaskRecord in the header (stage times in seconds by name).
type Record struct {
	Samples    int                `json:"samples"`
	NewClasses []int              `json:"new_classes"`
	Removed    []int              `json:"removed,omitempty"`
	Classes    []int              `json:"classes,omitempty"`
	Lambda     float64            `json:"lambda"`
	RaisedFrom float64            `json:"raised_from,omitempty"`
	GCV        scores             `json:"gcv,omitempty"`       // null: not finite (NaN)
	Grid       []float64          `json:"grid,omitempty"`      // λ values GCV scored (relative grids)
	GCVScope   string             `json:"gcv_scope,omitempty"` // "all" when GCV scored all samples
	Seconds    map[string]float64 `json:"seconds"`             // by flycl.Stage name
}

func toRecord(r flycl.TaskRecord) Record {
	sec := make(map[string]float64, len(flycl.AllStages()))
	for _, st := range flycl.AllStages() {
		sec[st.String()] = r.Stages.Get(st).Seconds()
	}
	scope := ""
	if r.GCV != nil && r.GCVScope != flycl.GCVTask {
		scope = r.GCVScope.String()
	}
	return Record{GCVScope: scope, Samples: r.Samples, NewClasses: r.NewClasses, Removed: r.Removed, Classes: r.Classes, Lambda: r.Lambda, RaisedFrom: r.RaisedFrom, GCV: scores(r.GCV), Grid: r.Grid,
		Seconds: sec}
}

// fromRecord restores a record; stage times are informational, so an
// unknown stage name or an implausible time is dropped, not an error.
func fromRecord(r Record) flycl.TaskRecord {
	var st flycl.Stages
	for _, s := range flycl.AllStages() {
		if v := r.Seconds[s.String()]; v >= 0 && v <= 1e9 {
			st.Set(s, time.Duration(v*1e9))
		}
	}
	scope, _ := flycl.ParseGCVScope(r.GCVScope) // unknown scopes are refused by decode
	return flycl.TaskRecord{GCVScope: scope, Grid: r.Grid, Samples: r.Samples, NewClasses: r.NewClasses, Removed: r.Removed, Classes: r.Classes, Lambda: r.Lambda, RaisedFrom: r.RaisedFrom, GCV: []float64(r.GCV),
		Stages: st}
}

// scores are GCV scores in JSON: a score that is not finite (GCV has no
// value there) is written as null and read back as NaN.
type scores []float64

func (s scores) MarshalJSON() ([]byte, error) {
	out := make([]*float64, len(s))
	for i := range s {
		if !math.IsNaN(s[i]) && !math.IsInf(s[i], 0) {
			out[i] = &s[i]
		}
	}
	return json.Marshal(out)
}

func (s *scores) UnmarshalJSON(b []byte) error {
	var in []*float64
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*s = make(scores, len(in))
	for i, v := range in {
		(*s)[i] = math.NaN()
		if v != nil {
			(*s)[i] = *v
		}
	}
	return nil
}

// checkW verifies W against the fingerprint a file records: its Digest
// (sha), or in a file written before it was (legacy) its CRC-32C.
func checkW(w *projection.Matrix, sha string, crc uint32, legacy bool) error {
	switch {
	case sha != "":
		if d := w.Digest(); d != sha {
			return fmt.Errorf("its fingerprint (SHA-256) is %.16s…, the file says %.16s…", d, sha)
		}
	case legacy:
		if fp := legacyCRC(w); fp != crc {
			return fmt.Errorf("its fingerprint (CRC-32C) is %08x, the file says %08x", fp, crc)
		}
	default:
		return fmt.Errorf("the file records no fingerprint of W")
	}
	return nil
}

// legacyCRC is the CRC-32C of W's columns and values: W's fingerprint in
// files written before its Digest was (model format 3, statistics
// format 1), read and checked still.
func legacyCRC(w *projection.Matrix) uint32 {
	h := crc32.New(castagnoli)
	writeInt32s(h, w.Cols)
	writeFloats(h, w.Vals)
	return h.Sum32()
}

// Encode writes f (Snapshot required; Saved is set to now, and Created
// too when it is zero) to w in the current format.
func Encode(w io.Writer, f *File) error {
	s := f.Snapshot
	if s == nil {
		return fmt.Errorf("modelfile: encode: no model")
	}
	// Refuse what Decode would refuse: a file that cannot be loaded again
	// is worse than no file.
	if err := s.Validate(); err != nil {
		return fmt.Errorf("modelfile: encode: %w", err)
	}
	if p := f.Pipeline; p != nil {
		if err := p.validate(); err != nil {
			return fmt.Errorf("modelfile: encode: pipeline: %w", err)
		}
		if p.Dim != 0 && p.Dim != s.State().InputDim {
			return fmt.Errorf("modelfile: encode: pipeline: backbone dimension %d, model d=%d", p.Dim, s.State().InputDim)
		}
	}
	st := s.State()
	cfg := st.Config
	proj := s.Projection()
	switch m, p := int64(cfg.M), int64(cfg.P); {
	case cfg.M > MaxM:
		return fmt.Errorf("modelfile: encode: m=%d, files hold at most %d", cfg.M, MaxM)
	case st.InputDim > MaxD:
		return fmt.Errorf("modelfile: encode: d=%d, files hold at most %d", st.InputDim, MaxD)
	case len(st.Labels) > MaxClasses:
		return fmt.Errorf("modelfile: encode: %d classes, files hold at most %d", len(st.Labels), MaxClasses)
	case m*p > max(m*(m+1), minWEntries):
		return fmt.Errorf("modelfile: encode: W has m·p = %d entries, more than a file allows for m=%d", m*p, m)
	}
	f.Saved = time.Now().UTC()
	if f.Created.IsZero() {
		f.Created = f.Saved
	}
	if f.ID.IsZero() {
		f.ID = NewModelID()
	}
	hdr := Header{ID: f.ID.String(),
		Format: "flycl-model", InputDim: st.InputDim, Config: cfg,
		W: "seed", WSHA256: proj.Digest(), Labels: st.Labels,
		Samples: s.Samples(), Lambda: st.Lambda, Coef: st.Coef != nil, Saved: f.Saved,
		ModelVersion: st.Version, Names: st.Names, Created: f.Created, Pipeline: f.Pipeline,
		History: []Record{}, Counts: []*int{}, InputScale: st.InputScale,
	}
	if st.Rejection != (reject.Rule{}) {
		r := st.Rejection
		hdr.Rejection = &r
	}
	hdr.CalibrationPool = st.CalibrationPool
	for _, c := range st.Counts {
		if c >= 0 {
			hdr.Counts = append(hdr.Counts, &c)
		} else {
			hdr.Counts = append(hdr.Counts, nil)
		}
	}
	if proj.Seed == nil {
		hdr.W = "explicit"
	}
	if hdr.Labels == nil {
		hdr.Labels = []int{}
	}
	for _, r := range st.History {
		hdr.History = append(hdr.History, toRecord(r))
	}
	if d := st.Dual; d != nil {
		hdr.Form, hdr.DualRows, hdr.DualNonZeros, hdr.LambdaLimit = "dual", d.Samples(), d.NonZeros(), st.LambdaLimit
		if hdr.DualRows > MaxDualRows || hdr.DualNonZeros > MaxDualNonZeros {
			return fmt.Errorf("modelfile: encode: the dual form holds %d samples and %d non-zeros, files hold at most %d and %d", hdr.DualRows, hdr.DualNonZeros, MaxDualRows, MaxDualNonZeros)
		}
	}
	hj, err := json.Marshal(hdr)
	if err != nil {
		return fmt.Errorf("modelfile: encode header: %w", err)
	}
	if d := st.Dual; d != nil {
		err = writeFrame(w, modelKind, Version, hj, func(bw io.Writer) { writeDual(bw, d, st.Coef, proj, hdr.W == "explicit") })
		if err != nil {
			return fmt.Errorf("modelfile: encode: %w", err)
		}
		return nil
	}
	err = writeFrame(w, modelKind, PrimalVersion, hj, func(bw io.Writer) {
		// one row buffer and one byte buffer for all of G: no garbage in
		// proportion to G (which a heap as large as G would let grow)
		row := make([]float32, 0, cfg.M)
		var scratch []byte
		for i := 0; i < cfg.M; i++ {
			row = codec.AppendLowerRow(row[:0], s, i)
			scratch = appendFloats(scratch[:0], row)
			bw.Write(scratch)
		}
		writeFloats(bw, s.S())
		if st.Coef != nil {
			writeFloats(bw, st.Coef)
		}
		if hdr.W == "explicit" {
			writeInt32s(bw, proj.Cols)
			writeFloats(bw, proj.Vals)
		}
	})
	if err != nil {
		return fmt.Errorf("modelfile: encode: %w", err)
	}
	return nil
}

// Save writes f to path atomically (see internal/atomicfile: a temporary
// file in the same directory, synced and renamed over the target). A
// symbolic link at path is followed and the file it points to replaced;
// a directory, device, FIFO or socket at path is refused. An existing
// file keeps its permission bits; a new one gets 0666 less the umask.
// Stale temporaries of path left by killed writers are removed.
//
// The file written is a checkpoint: when the model has a journal
// (PATH.journal, see OpenJournal), Save then starts it anew on this
// checkpoint, and sets f.CRC.
func Save(path string, f *File) error {
	err := atomicfile.WriteFile(path, func(w io.Writer) error { return Encode(w, f) })
	if err != nil {
		return fmt.Errorf("save: %w", err)
	}
	crc, err := FileCRC(path)
	if err != nil {
		return fmt.Errorf("save: %w", err)
	}
	f.CRC = crc
	if err := ResetJournalKeep(path, f.Checkpoint(), historyKeep(path)); err != nil {
		// Every entry of the old journal is in the checkpoint now, so
		// removing it loses nothing; keeping it would let a writer append
		// to a journal that does not continue this file.
		if rerr := os.Remove(JournalPath(path)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return fmt.Errorf("save: the model is saved, but its journal could neither be restarted on it (%v) nor removed: %w", err, rerr)
		}
	}
	return nil
}

// historyKeep is how much history a checkpoint of the model file at path
// keeps in its journal: HistoryBytes, but no more than the model file's
// size (at least 8 MiB), so that a checkpoint's cost is bounded by the
// model's size, never by its journal's.
func historyKeep(path string) int64 {
	keep := int64(HistoryBytes)
	if fi, err := os.Stat(path); err == nil {
		keep = min(keep, max(fi.Size(), 8<<20))
	}
	return keep
}

// ReadCheckpoint reads the checkpoint the model file at path is (its
// version, CRC and ID) from its header and end, without reading or
// checking the rest (flycl repair).
func ReadCheckpoint(path string) (Checkpoint, error) {
	var cp Checkpoint
	f, err := os.Open(path)
	if err != nil {
		return cp, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return cp, err
	}
	fr, err := readFrame(f, fi.Size(), modelKind)
	if err != nil {
		return cp, fmt.Errorf("modelfile: %s: %w", path, err)
	}
	var hdr struct {
		Version uint64 `json:"model_version"`
		ID      string `json:"id"`
	}
	if err := json.Unmarshal(fr.header, &hdr); err != nil {
		return cp, fmt.Errorf("modelfile: %s: corrupt header: %w", path, err)
	}
	if cp.ID, err = parseModelID(hdr.ID); err != nil {
		return cp, fmt.Errorf("modelfile: %s: header: %w", path, err)
	}
	cp.Version = hdr.Version
	if cp.CRC, err = FileCRC(path); err != nil {
		return cp, err
	}
	return cp, nil
}

// SaveModel saves a model with no pipeline (features learned directly).
// It reads the model's statistics in place (codec.View):
// the model must not change until it returns.
func SaveModel(path string, m *flycl.Model) error {
	return Save(path, &File{Snapshot: codec.View(m)})
}

// Load reads a model file. A truncated or corrupted file, one from an
// unknown version, or one whose content does not make sense gives an
// error naming the file and what is wrong with it.
func Load(path string) (*File, error) { return loadFile(path, decode, damagedModel) }

// LoadForLearning reads a model file into a mutable model, reading G
// straight into the model's statistics (no second copy of G, which a Load
// followed by Snapshot.Model would hold at once: half again as much
// memory). The File's Snapshot is a view of the model
// (codec.View), valid until the model changes.
func LoadForLearning(path string) (*File, *flycl.Model, error) {
	type both struct {
		f *File
		m *flycl.Model
	}
	b, err := loadFile(path, func(r io.Reader, size int64) (both, error) {
		f, m, err := decodeInto(r, size, true)
		return both{f, m}, err
	}, damagedModel)
	return b.f, b.m, err
}

// damagedModel is the way out of a model file at path that does not
// read whole (its format and version are this build's).
func damagedModel(path string) string {
	return fmt.Sprintf("flycl saves a model file whole, by a rename, so this one was cut or changed since: restore it from a backup, or move it aside and learn anew with flycl learn --model %s", path)
}

// loadFile opens the regular file at path and decodes it with dec, which is
// told the file's size (so claimed sizes can be checked before allocating);
// errors name the file, and those of a file of this format that does not
// read whole (cut, a byte changed) add damaged(path), the way out.
func loadFile[T any](path string, dec func(r io.Reader, size int64) (T, error), damaged func(path string) string) (T, error) {
	var zero T
	fh, err := os.Open(path)
	if err != nil {
		return zero, fmt.Errorf("load %s: %w", path, err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return zero, fmt.Errorf("load %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return zero, fmt.Errorf("load %s: not a regular file", path)
	}
	f, err := dec(bufio.NewReaderSize(fh, 1<<20), fi.Size())
	if err != nil {
		if nf := (*notThisFormat)(nil); !errors.As(err, &nf) {
			return zero, fmt.Errorf("load %s: %w (%s)", path, err, damaged(path))
		}
		return zero, fmt.Errorf("load %s: %w", path, err)
	}
	return f, nil
}

// LoadModel loads a model file and returns a mutable model.
func LoadModel(path string) (*flycl.Model, error) {
	_, m, err := LoadForLearning(path)
	return m, err
}

// Decode reads a model file from r (formats 1 and 2). It allocates
// memory only for data it has read, never for what a header merely
// claims: a forged header gives an error, not an out-of-memory crash.
func Decode(r io.Reader) (*File, error) {
	return decode(r, -1)
}

// decode reads a model; size is the total length when known (-1 if not),
// which allows exact truncation messages before reading the data.
func decode(rd io.Reader, size int64) (*File, error) {
	f, _, err := decodeInto(rd, size, false)
	return f, err
}

// decodeInto reads a model; with mutable and the size known it reads G
// into a new model's statistics and also returns that model (the File's
// Snapshot then a view of it).
func decodeInto(rd io.Reader, size int64, mutable bool) (*File, *flycl.Model, error) {
	fail := func(format string, a ...any) (*File, *flycl.Model, error) { return nil, nil, fmt.Errorf(format, a...) }
	fr, err := readFrame(rd, size, modelKind)
	if err != nil {
		return nil, nil, err
	}
	format := fr.format
	// With the size known (and checked against the header below), arrays
	// are allocated at once; from a plain reader they grow as data arrives.
	r := fr.data
	r.exact = size >= 0
	var hdr Header
	if err := json.Unmarshal(fr.header, &hdr); err != nil {
		return fail("corrupt header: %v", err)
	}
	if hdr.Format != "flycl-model" {
		return fail("header format %q, want flycl-model", hdr.Format)
	}
	// Meaning before allocation: every size the data needs is bounded.
	switch {
	case hdr.M <= 0 || hdr.M > MaxM:
		return fail("corrupt header: m=%d outside [1, %d]", hdr.M, MaxM)
	case hdr.InputDim <= 0 || hdr.InputDim > MaxD:
		return fail("corrupt header: d=%d outside [1, %d]", hdr.InputDim, MaxD)
	case hdr.P <= 0 || hdr.P > hdr.InputDim:
		return fail("corrupt header: p=%d outside [1, d=%d]", hdr.P, hdr.InputDim)
	case hdr.K <= 0 || hdr.K > hdr.M:
		return fail("corrupt header: k=%d outside [1, m=%d]", hdr.K, hdr.M)
	case len(hdr.Labels) > MaxClasses:
		return fail("corrupt header: %d classes, at most %d", len(hdr.Labels), MaxClasses)
	case hdr.Samples < 0:
		return fail("corrupt header: negative sample count %d", hdr.Samples)
	case len(hdr.Lambdas) == 0:
		return fail("corrupt header: empty lambda grid")
	case hdr.W != "seed" && hdr.W != "explicit":
		return fail("corrupt header: w=%q, want seed or explicit", hdr.W)
	}
	m, nc, p := int64(hdr.M), int64(len(hdr.Labels)), int64(hdr.P)
	if m*p > max(m*(m+1), minWEntries) {
		return fail("corrupt header: W would have m·p = %d entries, more than allowed for m=%d", m*p, m)
	}
	dual := hdr.Form != ""
	switch {
	case dual && hdr.Form != "dual":
		return fail("corrupt header: form %q, want dual (or none)", hdr.Form)
	case dual && format < 5:
		return fail("corrupt header: a dual form in a version %d file (from version 5)", format)
	case hdr.DualRows < 0 || hdr.DualRows > MaxDualRows:
		return fail("corrupt header: dual_rows %d outside [0, %d]", hdr.DualRows, MaxDualRows)
	case hdr.DualNonZeros < 0 || hdr.DualNonZeros > MaxDualNonZeros || int64(hdr.DualNonZeros) > int64(hdr.DualRows)*m:
		return fail("corrupt header: dual_nonzeros %d outside [0, min(%d, dual_rows·m)]", hdr.DualNonZeros, MaxDualNonZeros)
	case !dual && (hdr.DualRows != 0 || hdr.DualNonZeros != 0):
		return fail("corrupt header: dual_rows or dual_nonzeros without the dual form")
	case dual && hdr.DualRows != hdr.Samples:
		return fail("corrupt header: %d samples, the dual form holds %d", hdr.Samples, hdr.DualRows)
	}
	data := 4*m*(m+1)/2 + 4*nc*m
	if dual {
		data = 8*int64(hdr.DualRows) + 8*int64(hdr.DualNonZeros)
	}
	if hdr.Coef {
		data += 4 * nc * m
	}
	if hdr.W == "explicit" {
		data += 8 * m * p
	}
	if err := fr.checkSize(data); err != nil {
		return nil, nil, err
	}
	var g, s []float32
	var acc *ridge.Accumulator
	var dualForm *ridge.Dual
	if dual {
		if dualForm, err = readDual(r, hdr.M, len(hdr.Labels), hdr.DualRows, hdr.DualNonZeros); err != nil {
			return fail("%v", err)
		}
	} else if mutable && r.exact { // the size checked: G is in the file
		if acc, err = ridge.NewAccumulator(hdr.M); err != nil {
			return fail("%v", err)
		}
		row := make([]float32, 0, hdr.M)
		for i := 0; i < hdr.M && r.err == nil; i++ {
			row = r.floatsInto(row[:0], i+1)
			if r.err == nil {
				acc.SetLowerRow(i, row)
			}
		}
	} else {
		g = r.floats(int(m * (m + 1) / 2))
	}
	if !dual {
		s = r.floats(int(nc * m))
	}
	var coef []float32
	if hdr.Coef {
		coef = r.floats(int(nc * m))
	}
	var cols []int32
	var vals []float32
	if hdr.W == "explicit" {
		cols = r.int32s(int(m * p))
		vals = r.floats(int(m * p))
	}
	if err := fr.finish(); err != nil {
		return nil, nil, err
	}
	var w *projection.Matrix
	if hdr.W == "explicit" {
		if w, err = projection.New(hdr.M, hdr.InputDim, hdr.P, cols, vals); err != nil {
			return fail("stored W: %v", err)
		}
	} else if w, err = projection.Generate(hdr.M, hdr.InputDim, hdr.P, hdr.Seed); err != nil {
		return fail("%v", err)
	}
	if err := checkW(w, hdr.WSHA256, hdr.WCRC, format < 4); err != nil {
		if hdr.W == "seed" {
			return fail("W regenerated from seed %d: %v", hdr.Seed, err)
		}
		return fail("stored W: %v", err)
	}
	for i, rec := range hdr.History {
		if _, err := flycl.ParseGCVScope(rec.GCVScope); err != nil {
			return fail("history step %d: %v", i, err)
		}
	}
	st := flycl.State{
		Config:   hdr.Config,
		InputDim: hdr.InputDim, Labels: hdr.Labels, Lambda: hdr.Lambda, Coef: coef,
		Names: hdr.Names, Version: hdr.ModelVersion, InputScale: hdr.InputScale,
		Dual: dualForm, LambdaLimit: hdr.LambdaLimit,
	}
	if hdr.Rejection != nil && format >= 3 {
		if err := hdr.Rejection.Validate(); err != nil {
			return fail("header rejection: %v", err)
		}
		st.Rejection = *hdr.Rejection
	}
	if format >= 3 {
		if len(hdr.CalibrationPool) > reject.MaxCalibrationPool {
			return fail("header calibration_pool: %d scores, at most %d", len(hdr.CalibrationPool), reject.MaxCalibrationPool)
		}
		st.CalibrationPool = hdr.CalibrationPool
	}
	for _, rec := range hdr.History {
		st.History = append(st.History, fromRecord(rec))
	}
	if format == 1 {
		// Version 1 kept neither names, counts nor a model version.
		st.Names, st.Counts, st.Version = nil, nil, uint64(len(hdr.History))
	} else {
		if hdr.Counts == nil && nc > 0 {
			return fail("corrupt header: no class counts")
		}
		st.Counts = make([]int, len(hdr.Counts))
		for i, c := range hdr.Counts {
			switch {
			case c == nil:
				st.Counts[i] = -1
			case *c < 0:
				return fail("class %d has a negative sample count %d", i, *c)
			default:
				st.Counts[i] = *c
			}
		}
		if hdr.Pipeline != nil {
			if err := hdr.Pipeline.validate(); err != nil {
				return fail("header pipeline: %v", err)
			}
			if hdr.Pipeline.Dim != 0 && hdr.Pipeline.Dim != hdr.InputDim {
				return fail("header pipeline: backbone dimension %d, model d=%d", hdr.Pipeline.Dim, hdr.InputDim)
			}
		}
	}
	id, err := parseModelID(hdr.ID)
	if err != nil {
		return fail("header: %v", err)
	}
	file := &File{Pipeline: hdr.Pipeline, Created: hdr.Created, Saved: hdr.Saved, Format: format, CRC: fr.sum, ID: id}
	if dual && mutable {
		model, err := codec.Restore(st, w, nil)
		if err != nil {
			return fail("%v", err)
		}
		file.Snapshot = codec.View(model)
		if err := file.Snapshot.Validate(); err != nil {
			return fail("%v", err)
		}
		return file, model, nil
	}
	if acc != nil {
		if err := acc.SetS(s, len(hdr.Labels), hdr.Samples); err != nil {
			return fail("%v", err)
		}
		model, err := codec.Restore(st, w, acc)
		if err != nil {
			return fail("%v", err)
		}
		// the checks NewSnapshot makes, on the statistics in place
		file.Snapshot = codec.View(model)
		if err := file.Snapshot.Validate(); err != nil {
			return fail("%v", err)
		}
		return file, model, nil
	}
	snap, err := codec.NewSnapshot(st, w, g, s, hdr.Samples)
	if err != nil {
		return fail("%v", err)
	}
	file.Snapshot = snap
	return file, nil, nil
}

// reader reads little-endian arrays, growing them only as data arrives.
type reader struct {
	r     io.Reader
	buf   []byte
	err   error
	exact bool // the sizes are known to be in the file: allocate at once
}

func (r *reader) capacity(n int) int {
	if r.exact {
		return n
	}
	return min(n, chunk)
}

const chunk = 1 << 16 // values per read

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if cap(r.buf) < n {
		// at least a chunk of the widest values, so that reads of
		// growing lengths (G's rows) do not reallocate each time
		r.buf = make([]byte, max(n, 8*chunk))
	}
	b := r.buf[:n]
	if _, err := io.ReadFull(r.r, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		r.err = err
		return nil
	}
	return b
}

// floats reads n floats into a new slice (nil on error), growing it as
// the bytes arrive rather than allocating what a header claims.
func (r *reader) floats(n int) []float32 {
	out := r.floatsInto(make([]float32, 0, r.capacity(n)), n)
	if r.err != nil {
		return nil
	}
	return out
}

// floatsInto appends n floats read to dst (which, with room for them,
// is not reallocated): no garbage per call.
func (r *reader) floatsInto(dst []float32, n int) []float32 {
	for k := n; k > 0 && r.err == nil; {
		c := min(k, chunk)
		b := r.bytes(4 * c)
		if b == nil {
			return dst
		}
		for i := 0; i < c; i++ {
			dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		}
		k -= c
	}
	return dst
}

func (r *reader) int32s(n int) []int32 {
	out := make([]int32, 0, r.capacity(n))
	for len(out) < n && r.err == nil {
		k := min(n-len(out), chunk)
		b := r.bytes(4 * k)
		if b == nil {
			return nil
		}
		for i := 0; i < k; i++ {
			out = append(out, int32(binary.LittleEndian.Uint32(b[4*i:])))
		}
	}
	return out
}

// appendFloats appends the little-endian bytes of s to b.
func appendFloats(b []byte, s []float32) []byte {
	for _, v := range s {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

func writeFloats(w io.Writer, s []float32) {
	b := make([]byte, 4*min(len(s), chunk))
	for lo := 0; lo < len(s); lo += chunk {
		hi := min(len(s), lo+chunk)
		for i := lo; i < hi; i++ {
			binary.LittleEndian.PutUint32(b[4*(i-lo):], math.Float32bits(s[i]))
		}
		w.Write(b[:4*(hi-lo)])
	}
}

func writeInt32s(w io.Writer, s []int32) {
	b := make([]byte, 4*len(s))
	for i, v := range s {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	w.Write(b)
}

var _ hash.Hash32 = crc32.New(castagnoli)

// writeDual writes the data of a model in the dual form: the rows'
// classes and lengths, their columns and values, the classifier and an
// explicit W.
func writeDual(bw io.Writer, d *ridge.Dual, coef []float32, proj *projection.Matrix, explicit bool) {
	n := d.Samples()
	head := make([]int32, 2*n)
	for i := range n {
		cols, _, c := d.Row(i)
		head[i], head[n+i] = int32(c), int32(len(cols))
	}
	writeInt32s(bw, head)
	for i := range n {
		cols, _, _ := d.Row(i)
		writeInt32s(bw, cols)
	}
	for i := range n {
		_, vals, _ := d.Row(i)
		writeFloats(bw, vals)
	}
	if coef != nil {
		writeFloats(bw, coef)
	}
	if explicit {
		writeInt32s(bw, proj.Cols)
		writeFloats(bw, proj.Vals)
	}
}

// readDual reads the rows of a dual form (see Header.Form): rows samples
// with nnz non-zeros in all, whose lengths must add up to nnz; the
// columns, values and classes are checked by ridge.FromRows.
func readDual(r *reader, m, nc, rows, nnz int) (*ridge.Dual, error) {
	head := r.int32s(2 * rows)
	if r.err != nil {
		return nil, r.err
	}
	total := 0
	for i := range rows {
		l := int(head[rows+i])
		if l < 0 || l > m {
			return nil, fmt.Errorf("dual row %d has %d non-zeros, want [0, m=%d]", i, l, m)
		}
		total += l
	}
	if total != nnz {
		return nil, fmt.Errorf("corrupt header: dual rows hold %d non-zeros, header says %d", total, nnz)
	}
	allCols := r.int32s(nnz)
	allVals := r.floats(nnz)
	if r.err != nil {
		return nil, r.err
	}
	cols, vals, cls := make([][]int32, rows), make([][]float32, rows), make([]int, rows)
	o := 0
	for i := range rows {
		l := int(head[rows+i])
		cols[i], vals[i], cls[i] = allCols[o:o+l:o+l], allVals[o:o+l:o+l], int(head[i])
		o += l
	}
	return ridge.FromRows(m, nc, cols, vals, cls)
}
