// Package modelfile saves and loads Fly-CL models, so that a model can
// stop and continue learning later, and exchanges projection matrices W
// with other implementations as .npz files.
//
// # Model file format (version 1)
//
// All integers and floats are little-endian.
//
//	magic    8 bytes  "FLYCLMDL"
//	version  uint32   1
//	hlen     uint32   length of the header
//	header   hlen bytes of JSON (see Header)
//	G        m(m+1)/2 float32: the lower triangle of G, row by row
//	S        classes×m float32
//	C        classes×m float32 (present when the header says coef)
//	Wcols    m×p int32, then Wvals m×p float32 (present when W is explicit)
//	crc      uint32   CRC-32C (Castagnoli) of every byte above
//	end      8 bytes  "FLYCLEND"
//
// A W generated from a seed is stored as the seed plus a CRC-32C
// fingerprint of its entries, which is checked when the file is loaded.
// Files are written to a temporary file, synced and renamed into place, so
// a crash never leaves a half-written model where a good one was.
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
	"math"
	"os"
	"time"

	"github.com/flycl/flycl"
	"github.com/flycl/flycl/internal/atomicfile"
	"github.com/flycl/flycl/projection"
	"github.com/flycl/flycl/ridge"
)

const (
	magic   = "FLYCLMDL"
	endMark = "FLYCLEND"
	// Version is the format version this package writes.
	Version = 1
	// maxHeader bounds the JSON header (the class map and history of a
	// very long run fit easily).
	maxHeader = 256 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Header is the JSON header of a model file.
type Header struct {
	Format     string    `json:"format"` // "flycl-model"
	InputDim   int       `json:"d"`
	M          int       `json:"m"`
	P          int       `json:"p"`
	K          int       `json:"k"`
	Seed       uint64    `json:"seed"`
	W          string    `json:"w"`          // "seed" or "explicit"
	WCRC       uint32    `json:"w_crc32c"`   // fingerprint of W
	TopK       string    `json:"topk"`       // "signed" or "magnitude"
	Lambdas    []float64 `json:"lambdas"`    // GCV grid
	GCV        string    `json:"gcv"`        // GCV method
	Projection string    `json:"projection"` // projection method
	Labels     []int     `json:"labels"`     // class index -> label
	Samples    int       `json:"samples"`    // samples accumulated
	Lambda     float64   `json:"lambda"`     // λ of the stored classifier
	Coef       bool      `json:"coef"`       // classifier stored
	History    []Record  `json:"history"`    // one per learning step
	Saved      time.Time `json:"saved"`      // when the file was written
	Backend    string    `json:"linalg,omitempty"`
}

// Record is a TaskRecord in the header (stage times in seconds by name,
// the JSON form of flycl.Stages).
type Record struct {
	Samples    int          `json:"samples"`
	NewClasses []int        `json:"new_classes"`
	Lambda     float64      `json:"lambda"`
	RaisedFrom float64      `json:"raised_from,omitempty"`
	GCV        []float64    `json:"gcv,omitempty"`
	Seconds    flycl.Stages `json:"seconds"`
}

func toRecord(r flycl.TaskRecord) Record {
	return Record{Samples: r.Samples, NewClasses: r.NewClasses, Lambda: r.Lambda, RaisedFrom: r.RaisedFrom, GCV: r.GCV, Seconds: r.Stages}
}

func fromRecord(r Record) flycl.TaskRecord {
	return flycl.TaskRecord{Samples: r.Samples, NewClasses: r.NewClasses, Lambda: r.Lambda, RaisedFrom: r.RaisedFrom, GCV: r.GCV, Stages: r.Seconds}
}

// fingerprint is the CRC-32C of W's columns and values.
func fingerprint(w *projection.Matrix) uint32 {
	h := crc32.New(castagnoli)
	writeInt32s(h, w.Cols)
	writeFloats(h, w.Vals)
	return h.Sum32()
}

// Save writes the model to path atomically.
func Save(path string, m *flycl.Model) error {
	st := m.State()
	cfg := st.Config
	w := m.Projection()
	hdr := Header{
		Format: "flycl-model", InputDim: st.InputDim, M: cfg.M, P: cfg.P, K: cfg.K, Seed: cfg.Seed,
		W: "seed", WCRC: fingerprint(w), TopK: cfg.TopK.String(), Lambdas: cfg.Lambdas,
		GCV: cfg.GCV.String(), Projection: cfg.Projection.String(), Labels: st.Labels,
		Samples: m.Samples(), Lambda: st.Lambda, Coef: st.Coef != nil, Saved: time.Now().UTC(),
	}
	if w.Seed == nil {
		hdr.W = "explicit"
	}
	if hdr.Labels == nil {
		hdr.Labels = []int{}
	}
	for _, r := range st.History {
		hdr.History = append(hdr.History, toRecord(r))
	}
	hj, err := json.Marshal(hdr)
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	af, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(af, crc), 1<<20)
	var pre [16]byte
	copy(pre[:], magic)
	binary.LittleEndian.PutUint32(pre[8:], Version)
	binary.LittleEndian.PutUint32(pre[12:], uint32(len(hj)))
	bw.Write(pre[:])
	bw.Write(hj)
	acc := m.Statistics()
	for i := 0; i < cfg.M; i++ {
		writeFloats(bw, acc.LowerRow(i))
	}
	writeFloats(bw, acc.S())
	if st.Coef != nil {
		writeFloats(bw, st.Coef)
	}
	if hdr.W == "explicit" {
		writeInt32s(bw, w.Cols)
		writeFloats(bw, w.Vals)
	}
	if err := bw.Flush(); err != nil {
		af.Abort()
		return fmt.Errorf("save %s: %w", path, err)
	}
	var tail [12]byte
	binary.LittleEndian.PutUint32(tail[:], crc.Sum32())
	copy(tail[4:], endMark)
	if _, err := af.Write(tail[:]); err != nil {
		af.Abort()
		return fmt.Errorf("save %s: %w", path, err)
	}
	return af.Commit()
}

// Load reads a model written by Save. A truncated or corrupted file, or
// one from an incompatible version, gives an error naming the file and
// what is wrong with it.
func Load(path string) (*flycl.Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	fail := func(format string, a ...any) error {
		return fmt.Errorf("load %s: "+format, append([]any{path}, a...)...)
	}
	crc := crc32.New(castagnoli)
	r := &reader{r: io.TeeReader(bufio.NewReaderSize(f, 1<<20), crc)}
	var pre [16]byte
	if _, err := io.ReadFull(r.r, pre[:]); err != nil {
		return nil, fail("too short to be a Fly-CL model file")
	}
	if string(pre[:8]) != magic {
		return nil, fail("not a Fly-CL model file (bad magic %q)", pre[:8])
	}
	if v := binary.LittleEndian.Uint32(pre[8:]); v != Version {
		return nil, fail("format version %d, this build reads version %d", v, Version)
	}
	hlen := int64(binary.LittleEndian.Uint32(pre[12:]))
	if hlen > maxHeader || 16+hlen > fi.Size() {
		return nil, fail("truncated or corrupt header (length %d, file %d bytes)", hlen, fi.Size())
	}
	hj := make([]byte, hlen)
	if _, err := io.ReadFull(r.r, hj); err != nil {
		return nil, fail("truncated header")
	}
	var hdr Header
	if err := json.Unmarshal(hj, &hdr); err != nil {
		return nil, fail("corrupt header: %v", err)
	}
	if hdr.Format != "flycl-model" {
		return nil, fail("header format %q, want flycl-model", hdr.Format)
	}
	if hdr.M <= 0 || hdr.P <= 0 || hdr.InputDim <= 0 || hdr.P > hdr.InputDim || hdr.M > 1<<20 {
		return nil, fail("corrupt header: m=%d p=%d d=%d", hdr.M, hdr.P, hdr.InputDim)
	}
	m, nc := int64(hdr.M), int64(len(hdr.Labels))
	want := 16 + hlen + 4*m*(m+1)/2 + 4*nc*m + 12
	if hdr.Coef {
		want += 4 * nc * m
	}
	if hdr.W == "explicit" {
		want += 8 * m * int64(hdr.P)
	} else if hdr.W != "seed" {
		return nil, fail("corrupt header: w=%q", hdr.W)
	}
	if fi.Size() != want {
		if fi.Size() < want {
			return nil, fail("truncated: %d bytes, the header describes %d", fi.Size(), want)
		}
		return nil, fail("%d bytes, the header describes %d (trailing data)", fi.Size(), want)
	}
	acc, err := ridge.NewAccumulator(hdr.M)
	if err != nil {
		return nil, fail("%v", err)
	}
	for i := 0; i < hdr.M; i++ {
		row := r.floats(i + 1)
		if r.err != nil {
			break
		}
		acc.SetLowerRow(i, row)
	}
	s := r.floats(int(nc * m))
	var coef []float32
	if hdr.Coef {
		coef = r.floats(int(nc * m))
	}
	var w *projection.Matrix
	if hdr.W == "explicit" {
		cols := r.int32s(hdr.M * hdr.P)
		vals := r.floats(hdr.M * hdr.P)
		if r.err == nil {
			if w, err = projection.New(hdr.M, hdr.InputDim, hdr.P, cols, vals); err != nil {
				return nil, fail("stored W: %v", err)
			}
		}
	}
	if r.err != nil {
		return nil, fail("truncated data: %v", r.err)
	}
	sum := crc.Sum32()
	var tail [12]byte
	if _, err := io.ReadFull(r.r, tail[:]); err != nil || string(tail[4:]) != endMark {
		return nil, fail("truncated: end marker missing")
	}
	if got := binary.LittleEndian.Uint32(tail[:]); got != sum {
		return nil, fail("checksum mismatch (stored %08x, computed %08x): the file is corrupt", got, sum)
	}
	if err := acc.SetS(s, int(nc), hdr.Samples); err != nil {
		return nil, fail("%v", err)
	}
	if w == nil {
		if w, err = projection.Generate(hdr.M, hdr.InputDim, hdr.P, hdr.Seed); err != nil {
			return nil, fail("%v", err)
		}
	}
	if fp := fingerprint(w); fp != hdr.WCRC {
		return nil, fail("W regenerated from seed %d has fingerprint %08x, the file says %08x", hdr.Seed, fp, hdr.WCRC)
	}
	topk, err := projection.ParseTopKMode(hdr.TopK)
	if err != nil {
		return nil, fail("%v", err)
	}
	gcv, err := ridge.ParseGCVMethod(hdr.GCV)
	if err != nil {
		return nil, fail("%v", err)
	}
	pm, err := projection.ParseMethod(hdr.Projection)
	if err != nil {
		return nil, fail("%v", err)
	}
	st := flycl.State{
		Config: flycl.Config{M: hdr.M, P: hdr.P, K: hdr.K, Seed: hdr.Seed, TopK: topk,
			Lambdas: hdr.Lambdas, GCV: gcv, Projection: pm},
		InputDim: hdr.InputDim, Labels: hdr.Labels, Lambda: hdr.Lambda, Coef: coef,
	}
	for _, rec := range hdr.History {
		st.History = append(st.History, fromRecord(rec))
	}
	model, err := flycl.Restore(st, w, acc)
	if err != nil {
		return nil, fail("%v", err)
	}
	return model, nil
}

type reader struct {
	r   io.Reader
	buf []byte
	err error
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
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

func (r *reader) floats(n int) []float32 {
	out := make([]float32, n)
	const chunk = 1 << 16
	for lo := 0; lo < n; lo += chunk {
		hi := min(n, lo+chunk)
		b := r.bytes(4 * (hi - lo))
		if b == nil {
			return nil
		}
		for i := lo; i < hi; i++ {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*(i-lo):]))
		}
	}
	return out
}

func (r *reader) int32s(n int) []int32 {
	out := make([]int32, n)
	b := r.bytes(4 * n)
	if b == nil {
		return nil
	}
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func writeFloats(w io.Writer, s []float32) {
	const chunk = 1 << 16
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
