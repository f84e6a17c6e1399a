package smallfile

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Limits for the files the programs read through this package.
const (
	// SecretLimit bounds a password or token file (64 KiB): a secret is
	// one line.
	SecretLimit = 64 << 10
	// CALimit bounds a PEM file of CA certificates (4 MiB): a system's
	// whole bundle is a few hundred KiB.
	CALimit = 4 << 20
)

// ErrTooLarge is what a *TooLargeError matches with errors.Is.
var ErrTooLarge = errors.New("file is larger than its limit")

// TooLargeError is a file over its limit: Path names it, Limit is the
// limit in bytes, Size the file's size when it is a regular file (-1 for
// a device or pipe, of which only Limit+1 bytes were read).
type TooLargeError struct {
	Path  string
	Limit int64
	Size  int64
}

func (e *TooLargeError) Error() string {
	if e.Size >= 0 {
		return fmt.Sprintf("%s: %d bytes, more than the limit of %d bytes", e.Path, e.Size, e.Limit)
	}
	return fmt.Sprintf("%s: more than the limit of %d bytes", e.Path, e.Limit)
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// Read returns the contents of the file at path when it holds at most
// limit bytes; a larger one is a *TooLargeError naming it, found before
// more than limit+1 bytes are read. A failure to open or read is the
// *fs.PathError of package os.
func Read(path string, limit int64) ([]byte, error) {
	if limit < 0 {
		return nil, fmt.Errorf("smallfile: %s: negative limit %d", path, limit)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := int64(-1)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		if size = st.Size(); size > limit {
			return nil, &TooLargeError{Path: path, Limit: limit, Size: size}
		}
	}
	// A regular file may grow between Stat and the read: the limit holds
	// for what is read, whatever the size said.
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	if int64(len(b)) > limit {
		if size >= 0 {
			size = int64(len(b)) // at least this many
		}
		return nil, &TooLargeError{Path: path, Limit: limit, Size: size}
	}
	return b, nil
}
