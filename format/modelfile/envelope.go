package modelfile

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
)

// The framing shared by model and statistics files (all little-endian):
//
//	magic    8 bytes  ("FLYCLMDL" or "FLYCLSTA")
//	version  uint32
//	hlen     uint32   length of the header
//	header   hlen bytes of JSON
//	data     what the header describes
//	crc      uint32   CRC-32C (Castagnoli) of every byte above
//	end      8 bytes  "FLYCLEND"

// kind is one file type in the shared framing.
type kind struct {
	magic      string
	name       string // "model" or "statistics", for errors
	minV, maxV int    // format versions this build reads
}

var (
	modelKind = kind{magic: magic, name: "model", minV: 1, maxV: Version}
	statsKind = kind{magic: statsMagic, name: "statistics", minV: 1, maxV: StatsVersion}
)

// writeFrame writes the preamble and the JSON header hj, then the data
// (written by body to a buffered writer), the checksum and the end mark.
func writeFrame(w io.Writer, k kind, version int, hj []byte, body func(w io.Writer)) error {
	if len(hj) > maxHeader {
		return fmt.Errorf("header of %d bytes exceeds %d", len(hj), maxHeader)
	}
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<20)
	var pre [16]byte
	copy(pre[:], k.magic)
	binary.LittleEndian.PutUint32(pre[8:], uint32(version))
	binary.LittleEndian.PutUint32(pre[12:], uint32(len(hj)))
	bw.Write(pre[:])
	bw.Write(hj)
	body(bw)
	if err := bw.Flush(); err != nil {
		return err
	}
	var tail [12]byte
	binary.LittleEndian.PutUint32(tail[:], crc.Sum32())
	copy(tail[4:], endMark)
	_, err := w.Write(tail[:])
	return err
}

// frame is a framed file being read: its format version, its JSON
// header, and a reader of its data that feeds the checksum.
type frame struct {
	format int
	header []byte
	hlen   int64 // bytes of the header (its length in the preamble)
	data   *reader
	rd     io.Reader // the underlying reader (for the tail)
	size   int64     // total length when known, else -1
	crc    hash.Hash32
	sum    uint32 // the checksum, once finish has checked it
}

// notThisFormat is the error of a file of another format, kind or
// version (a photo, a statistics file for a model file, a newer model
// file): not a damaged one.
type notThisFormat struct{ error }

func (e *notThisFormat) Unwrap() error { return e.error }

// readFrame reads and checks the preamble (magic, a version this build
// reads, a header length within bounds and within size when size >= 0)
// and the header.
func readFrame(rd io.Reader, size int64, k kind) (*frame, error) {
	f := &frame{rd: rd, size: size, crc: crc32.New(castagnoli)}
	f.data = &reader{r: io.TeeReader(rd, f.crc)}
	var pre [16]byte
	if _, err := io.ReadFull(f.data.r, pre[:]); err != nil {
		return nil, fmt.Errorf("too short to be a Fly-CL %s file", k.name)
	}
	if m := string(pre[:8]); m != k.magic {
		for _, other := range []kind{modelKind, statsKind} {
			if m == other.magic {
				return nil, &notThisFormat{fmt.Errorf("a Fly-CL %s file, not a %s file", other.name, k.name)}
			}
		}
		return nil, &notThisFormat{fmt.Errorf("not a Fly-CL %s file (bad magic %q)", k.name, pre[:8])}
	}
	f.format = int(binary.LittleEndian.Uint32(pre[8:]))
	if f.format < k.minV || f.format > k.maxV {
		reads := fmt.Sprintf("version %d", k.maxV)
		if k.minV != k.maxV {
			reads = fmt.Sprintf("versions %d to %d", k.minV, k.maxV)
		}
		return nil, &notThisFormat{fmt.Errorf("%s format version %d, this build reads %s", k.name, f.format, reads)}
	}
	f.hlen = int64(binary.LittleEndian.Uint32(pre[12:]))
	if f.hlen > maxHeader || (size >= 0 && 16+f.hlen > size) {
		return nil, fmt.Errorf("truncated or corrupt header (length %d, file %d bytes)", f.hlen, size)
	}
	hj, err := io.ReadAll(io.LimitReader(f.data.r, f.hlen))
	if err != nil || int64(len(hj)) != f.hlen {
		return nil, fmt.Errorf("truncated header")
	}
	f.header = hj
	return f, nil
}

// checkSize compares the known total size with the one the header
// describes (data bytes after the header).
func (f *frame) checkSize(data int64) error {
	want := 16 + f.hlen + data + 12
	if f.size >= 0 && f.size != want {
		if f.size < want {
			return fmt.Errorf("truncated: %d bytes, the header describes %d", f.size, want)
		}
		return fmt.Errorf("%d bytes, the header describes %d (trailing data)", f.size, want)
	}
	return nil
}

// finish checks that the data was read whole, then the checksum, the end
// mark, and (when the size is unknown) that nothing follows.
func (f *frame) finish() error {
	if f.data.err != nil {
		return fmt.Errorf("truncated data: %v", f.data.err)
	}
	sum := f.crc.Sum32()
	f.sum = sum
	var tail [12]byte
	if _, err := io.ReadFull(f.rd, tail[:]); err != nil || string(tail[4:]) != endMark {
		return fmt.Errorf("truncated: end marker missing")
	}
	if got := binary.LittleEndian.Uint32(tail[:]); got != sum {
		return fmt.Errorf("checksum mismatch (stored %08x, computed %08x): the file is corrupt", got, sum)
	}
	if f.size < 0 {
		var one [1]byte
		if n, _ := io.ReadFull(f.rd, one[:]); n > 0 {
			return fmt.Errorf("trailing data after the end marker")
		}
	}
	return nil
}
