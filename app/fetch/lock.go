package fetch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/flycl/flycl/internal/atomicfile"
	"github.com/flycl/flycl/internal/onejson"
)

// LockName is the lock file kept in each destination folder: the digests
// recorded at the first download of assets that have no published one, and
// the file lists of converted splits.
const LockName = "flycl-fetch.lock"

// maxLock bounds the lock file read (it holds a few entries).
const maxLock = 1 << 20

// Lock is the content of a lock file.
type Lock struct {
	Files  map[string]LockedFile  `json:"files"`
	Splits map[string]LockedSplit `json:"splits,omitempty"`
}

// LockedFile is a file's digest as recorded at its first download.
type LockedFile struct {
	SHA256   string `json:"sha256"`
	Size     int64  `json:"size"`
	URL      string `json:"url,omitempty"`
	Recorded string `json:"recorded,omitempty"` // RFC 3339 time
}

// LockedSplit is a converted split as recorded at its first conversion.
type LockedSplit struct {
	Files      int    `json:"files"`
	ListSHA256 string `json:"list_sha256"`
}

// lockFile is the on-disk form.
type lockFile struct {
	Version int                    `json:"version"`
	Note    string                 `json:"note,omitempty"`
	Files   map[string]LockedFile  `json:"files"`
	Splits  map[string]LockedSplit `json:"splits,omitempty"`
}

const lockNote = "written by flycl-lab fetch: SHA-256 of the first download of files without a published digest (trust on first use), and the file lists of converted splits; later downloads are verified against it"

// ParseLock decodes a lock file. Every entry is checked: a plain file name,
// a 64-digit lower-case hex SHA-256, a size and count that are not negative.
func ParseLock(b []byte) (*Lock, error) {
	if len(b) > maxLock {
		return nil, fmt.Errorf("fetch: %s: %d bytes, more than a lock file holds (%d)", LockName, len(b), maxLock)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f lockFile
	if err := onejson.Decode(dec, &f); errors.Is(err, onejson.ErrTrailing) {
		return nil, fmt.Errorf("fetch: %s: data after the JSON object", LockName)
	} else if err != nil {
		return nil, fmt.Errorf("fetch: %s: %w", LockName, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("fetch: %s: version %d, want 1", LockName, f.Version)
	}
	l := &Lock{Files: map[string]LockedFile{}, Splits: map[string]LockedSplit{}}
	for name, e := range f.Files {
		if err := checkName(name); err != nil {
			return nil, fmt.Errorf("fetch: %s: files: %w", LockName, err)
		}
		if !isHex(e.SHA256, 64) {
			return nil, fmt.Errorf("fetch: %s: files: %q: sha256 %q is not 64 lower-case hex digits", LockName, name, e.SHA256)
		}
		if e.Size < 0 {
			return nil, fmt.Errorf("fetch: %s: files: %q: size %d", LockName, name, e.Size)
		}
		l.Files[name] = e
	}
	for name, e := range f.Splits {
		if err := checkName(name); err != nil {
			return nil, fmt.Errorf("fetch: %s: splits: %w", LockName, err)
		}
		if !isHex(e.ListSHA256, 64) {
			return nil, fmt.Errorf("fetch: %s: splits: %q: list_sha256 %q is not 64 lower-case hex digits", LockName, name, e.ListSHA256)
		}
		if e.Files < 0 {
			return nil, fmt.Errorf("fetch: %s: splits: %q: files %d", LockName, name, e.Files)
		}
		l.Splits[name] = e
	}
	return l, nil
}

// Marshal encodes the lock file (entries sorted by name, so equal locks are
// equal bytes).
func (l *Lock) Marshal() ([]byte, error) {
	f := lockFile{Version: 1, Note: lockNote, Files: l.Files, Splits: l.Splits}
	if f.Files == nil {
		f.Files = map[string]LockedFile{}
	}
	if len(f.Splits) == 0 {
		f.Splits = nil
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ReadLock reads dir's lock file; a folder without one gives an empty Lock.
func ReadLock(dir string) (*Lock, error) {
	p := filepath.Join(dir, LockName)
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{Files: map[string]LockedFile{}, Splits: map[string]LockedSplit{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxLock+1))
	if err != nil {
		return nil, fmt.Errorf("fetch: %s: %w", p, err)
	}
	l, err := ParseLock(b)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, dir)
	}
	return l, nil
}

// WriteLock writes dir's lock file atomically.
func WriteLock(dir string, l *Lock) error {
	b, err := l.Marshal()
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, LockName), func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// updateLock reads dir's lock, applies change and writes it back.
func updateLock(dir string, change func(*Lock)) error {
	l, err := ReadLock(dir)
	if err != nil {
		return err
	}
	change(l)
	return WriteLock(dir, l)
}

// checkName accepts a plain file name.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
		return fmt.Errorf("%q is not a plain file name", name)
	}
	return nil
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
