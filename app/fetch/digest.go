package fetch

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"time"
)

// Digest is a published digest of a file: the algorithm ("sha256" or
// "md5") and the lower-case hex value. The zero Digest means none is
// published.
type Digest struct {
	Algo string
	Hex  string
}

// IsZero reports whether no digest is given.
func (d Digest) IsZero() bool { return d.Hex == "" }

func (d Digest) String() string {
	if d.IsZero() {
		return "none published"
	}
	return d.Algo + ":" + d.Hex
}

// newHash returns a hash for the algorithm.
func newHash(algo string) (hash.Hash, error) {
	switch algo {
	case "sha256":
		return sha256.New(), nil
	case "md5":
		return md5.New(), nil
	}
	return nil, fmt.Errorf("fetch: unknown digest algorithm %q (want sha256 or md5)", algo)
}

func sum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

// DigestError is a file whose digest is not the one expected. The file is
// not left in place.
type DigestError struct {
	File string // the file name
	Algo string
	Want string
	Got  string
	// TrustOnFirstUse: Want is the digest recorded in the lock file at the
	// first download, not a published one.
	TrustOnFirstUse bool
}

func (e *DigestError) Error() string {
	src := "published"
	if e.TrustOnFirstUse {
		src = "recorded in " + LockName + " at the first download"
	}
	return fmt.Sprintf("fetch: %s: %s is %s, want %s (%s); the download was removed", e.File, e.Algo, e.Got, e.Want, src)
}

// SizeError is a server that announces a size other than the published
// one; nothing is downloaded.
type SizeError struct {
	File      string
	URL       string
	Want, Got int64
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("fetch: %s: %s serves %d bytes, want %d (a different file?)", e.File, e.URL, e.Got, e.Want)
}

// HTTPError is a response with an unexpected status.
type HTTPError struct {
	URL    string
	Status int
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("fetch: GET %s: HTTP %d", e.URL, e.Status)
}

// Temporary reports whether a retry may succeed (5xx, 408, 429).
func (e *HTTPError) Temporary() bool {
	return e.Status >= 500 || e.Status == 408 || e.Status == 429
}

// SpaceError is a folder without room for a download.
type SpaceError struct {
	Dir        string
	Need, Free uint64
}

func (e *SpaceError) Error() string {
	return fmt.Sprintf("fetch: %s: %s free, %s needed", e.Dir, humanBytes(int64(e.Free)), humanBytes(int64(e.Need)))
}

// StallError is a connection that sent no bytes for After.
type StallError struct {
	URL   string
	After time.Duration
}

func (e *StallError) Error() string {
	return fmt.Sprintf("fetch: GET %s: no data for %v", e.URL, e.After)
}

// ErrHTML is a server that answered with an HTML page instead of the file
// (a login or confirmation page).
var ErrHTML = errors.New("fetch: the server sent an HTML page, not the file")

// ErrUnknown is a name that is not in the catalogue (or the settings).
var ErrUnknown = errors.New("fetch: unknown name")

// humanBytes writes n in B, KB, MB or GB (powers of 1000, as sizes are
// published).
func humanBytes(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// HumanBytes writes a byte count as the catalogue shows sizes (powers of
// 1000).
func HumanBytes(n int64) string { return humanBytes(n) }
