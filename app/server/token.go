package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/flycl/flycl/internal/smallfile"
)

// MinTokenLength is the shortest bearer token a token file may hold.
const MinTokenLength = 8

// ErrShortToken is returned for a token file whose token is shorter than
// MinTokenLength.
var ErrShortToken = errors.New("the token must be at least 8 characters")

// ErrTokenCharacter is returned for a token file whose token holds a
// control character: no client could send it in an Authorization header
// (HTTP refuses them in header values, tab aside).
var ErrTokenCharacter = errors.New("the token holds a control character, which an HTTP header cannot carry")

// ReadTokenFile reads the bearer token of a token file: its first line,
// without surrounding white space. A file over smallfile.SecretLimit
// (64 KiB) is refused (smallfile.ErrTooLarge) before it is read whole.
func ReadTokenFile(path string) (string, error) {
	b, err := smallfile.Read(path, smallfile.SecretLimit)
	if err != nil {
		return "", fmt.Errorf("server: token file: %w", err)
	}
	tok, _, _ := strings.Cut(string(b), "\n")
	tok = strings.TrimSpace(tok)
	if len(tok) < MinTokenLength {
		return "", fmt.Errorf("server: token file %s: %w", path, ErrShortToken)
	}
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return "", fmt.Errorf("server: token file %s: byte %d is %q: %w", path, i, c, ErrTokenCharacter)
		}
	}
	return tok, nil
}

// CreateTokenFile writes a new token file at path: 32 random bytes
// (crypto/rand) as 64 hexadecimal digits and a newline, readable by its
// owner only (mode 0600). The file appears whole or not at all: the token
// is written and synced to a temporary file in the same directory, which
// is then linked to path, so an existing file, or one another process
// creates meanwhile, is never replaced (fs.ErrExist).
func CreateTokenFile(path string) (string, error) {
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	tok := hex.EncodeToString(b[:])
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*") // mode 0600
	if err != nil {
		return "", fmt.Errorf("server: create token file %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.WriteString(tok + "\n")
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("server: create token file %s: %w", path, err)
	}
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("server: create token file %s: %w", path, fs.ErrExist)
		}
		return "", fmt.Errorf("server: create token file %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return tok, nil
}

// LoadOrCreateToken reads the token file at path, or, when there is none,
// creates one (CreateTokenFile) and reports that it did. When another
// process creates the file first, its token is read.
func LoadOrCreateToken(path string) (tok string, created bool, err error) {
	tok, err = ReadTokenFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return tok, false, err
	}
	tok, err = CreateTokenFile(path)
	if errors.Is(err, fs.ErrExist) {
		tok, err = ReadTokenFile(path)
		return tok, false, err
	}
	return tok, err == nil, err
}
