package fetch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// FileType is what a file is, told by its first bytes: checked before a
// file without a published digest is trusted on first use.
type FileType string

// The file types Fetch can check.
const (
	// AnyType: no check.
	AnyType FileType = ""
	// Safetensors: an 8-byte little-endian header length n, with 8+n no
	// more than the file, then a JSON object.
	Safetensors FileType = "safetensors"
	// Zip: a zip archive ("PK\x03\x04"): .zip, .npz, a PyTorch .pth
	// written since PyTorch 1.6.
	Zip FileType = "zip"
	// Gzip: gzip data (1f 8b): .gz, .tgz.
	Gzip FileType = "gzip"
	// Tar: a POSIX tar archive ("ustar" at byte 257).
	Tar FileType = "tar"
	// NPY: a NumPy array ("\x93NUMPY").
	NPY FileType = "npy"
	// ONNX: an ONNX model, a protobuf whose first field is ir_version
	// (field 1, varint: the byte 0x08).
	ONNX FileType = "onnx"
)

// TypeOf is the file type a file name's extension says ("" when it says
// none Fetch can check).
func TypeOf(name string) FileType {
	n := strings.ToLower(name)
	switch {
	case strings.HasSuffix(n, ".safetensors"):
		return Safetensors
	case strings.HasSuffix(n, ".zip"), strings.HasSuffix(n, ".npz"):
		return Zip
	case strings.HasSuffix(n, ".tar.gz"), strings.HasSuffix(n, ".tgz"), strings.HasSuffix(n, ".gz"):
		return Gzip
	case strings.HasSuffix(n, ".tar"):
		return Tar
	case strings.HasSuffix(n, ".npy"):
		return NPY
	case strings.HasSuffix(n, ".onnx"):
		return ONNX
	}
	return AnyType
}

// FileType is the asset's type: Type when the catalogue gives one, else
// TypeOf its file name.
func (a Asset) FileType() FileType {
	if a.Type != AnyType {
		return a.Type
	}
	return TypeOf(a.File)
}

// ApproxTolerance is how far a file trusted on first use may be from the
// catalogue's approximate size (ApproxSize), as a fraction of it.
const ApproxTolerance = 0.10

// FirstUseError is a file without a published digest that does not look
// like the catalogue's (its size or its type): it is not trusted, and no
// digest is recorded for it.
type FirstUseError struct {
	File   string
	Reason string
}

func (e *FirstUseError) Error() string {
	return fmt.Sprintf("fetch: %s: %s; no digest is published for it, so only a file of the catalogue's size and type is trusted on first use, and this one is not (nothing was recorded in %s)", e.File, e.Reason, LockName)
}

// CheckFirstUse reports whether the file at path (size bytes) may be
// trusted on first use as asset a: its size is the catalogue's (Size
// exactly; ApproxSize within ApproxTolerance), and its first bytes are
// those of its type (FileType). The error is a *FirstUseError.
func (a Asset) CheckFirstUse(path string, size int64) error {
	refuse := func(format string, args ...any) error {
		return &FirstUseError{File: a.File, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case a.Size > 0 && size != a.Size:
		return refuse("%d bytes, the catalogue says %d", size, a.Size)
	case a.Size == 0 && a.ApproxSize > 0:
		lo, hi := float64(a.ApproxSize)*(1-ApproxTolerance), float64(a.ApproxSize)*(1+ApproxTolerance)
		if float64(size) < lo || float64(size) > hi {
			return refuse("%d bytes (%s), the catalogue says about %s", size, HumanBytes(size), HumanBytes(a.ApproxSize))
		}
	}
	t := a.FileType()
	if t == AnyType {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	defer f.Close()
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("fetch: %s: %w", filepath.Base(path), err)
	}
	if why := checkMagic(t, head[:n], size); why != "" {
		return refuse("not a %s file: %s", t, why)
	}
	return nil
}

// checkMagic says why head (the first bytes of a file of size bytes) is
// not of type t ("" when it is).
func checkMagic(t FileType, head []byte, size int64) string {
	starts := func(p string) string {
		if !bytes.HasPrefix(head, []byte(p)) {
			return fmt.Sprintf("it begins %q, want %q", preview(head, len(p)), p)
		}
		return ""
	}
	switch t {
	case Safetensors:
		if len(head) < 9 || size < 9 {
			return fmt.Sprintf("%d bytes, too short for a header", size)
		}
		n := binary.LittleEndian.Uint64(head)
		if n < 2 || n > uint64(size)-8 {
			return fmt.Sprintf("its header length %d does not fit in %d bytes", n, size)
		}
		if head[8] != '{' {
			return fmt.Sprintf("its header begins %q, not a JSON object", preview(head[8:], 1))
		}
		return ""
	case Zip:
		return starts("PK\x03\x04")
	case Gzip:
		return starts("\x1f\x8b")
	case Tar:
		if len(head) < 262 || string(head[257:262]) != "ustar" {
			return "no \"ustar\" mark at byte 257"
		}
		return ""
	case NPY:
		return starts("\x93NUMPY")
	case ONNX:
		return starts("\x08")
	}
	return ""
}

// preview is up to n first bytes of b, for a message.
func preview(b []byte, n int) string {
	return string(b[:min(n, len(b))])
}

// Forget removes what dir's lock file recorded at the first use of asset
// a (its file's digest, its split's file list), so that the next fetch
// trusts a new download again (after CheckFirstUse). The file itself is
// left. It reports whether there was anything to remove.
func Forget(a Asset, dir string) (bool, error) {
	l, err := ReadLock(dir)
	if err != nil {
		return false, err
	}
	_, f := l.Files[a.File]
	_, s := l.Splits[a.Split]
	s = s && a.Split != ""
	if !f && !s {
		return false, nil
	}
	delete(l.Files, a.File)
	if s {
		delete(l.Splits, a.Split)
	}
	return true, WriteLock(dir, l)
}
