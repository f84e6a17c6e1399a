package server

import (
	"encoding/hex"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/flycl/flycl/internal/smallfile"
)

// TestTokenFile: a missing token file is created with 32 random bytes in
// hex, mode 0600, and read back the same the next time; a file that
// exists is never replaced, and one whose token is too short is refused;
// eight processes' worth of goroutines starting at once on a missing file
// all get the one token that exactly one of them created, and no
// temporary file is left behind.
func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "token")
	tok, created, err := LoadOrCreateToken(path)
	if err != nil || !created {
		t.Fatalf("create: %q %v %v", tok, created, err)
	}
	if b, err := hex.DecodeString(tok); err != nil || len(b) != 32 {
		t.Fatalf("token %q is not 32 bytes of hex", tok)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v (%v), want 0600", st.Mode().Perm(), err)
	}
	if b, _ := os.ReadFile(path); string(b) != tok+"\n" {
		t.Fatalf("file holds %q", b)
	}
	again, created, err := LoadOrCreateToken(path)
	if err != nil || created || again != tok {
		t.Fatalf("second load: %q %v %v, want %q", again, created, err, tok)
	}
	if _, err := CreateTokenFile(path); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("CreateTokenFile over an existing file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != tok+"\n" {
		t.Fatalf("an existing token file was replaced: %q", b)
	}

	// a user's own token: the first line, trimmed
	own := filepath.Join(dir, "own")
	os.WriteFile(own, []byte("  my-own-token-1 \nsecond line\n"), 0o600)
	if got, created, err := LoadOrCreateToken(own); err != nil || created || got != "my-own-token-1" {
		t.Fatalf("own token: %q %v %v", got, created, err)
	}
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("abc\n"), 0o600)
	if _, _, err := LoadOrCreateToken(short); !errors.Is(err, ErrShortToken) || !strings.Contains(err.Error(), short) {
		t.Fatalf("short token: %v", err)
	}
	// a token file is a line: an endless or oversized one is refused,
	// named, before it is read whole
	big := filepath.Join(dir, "big")
	os.WriteFile(big, []byte(strings.Repeat("t", smallfile.SecretLimit+1)), 0o600)
	for _, p := range []string{"/dev/zero", big} {
		if _, _, err := LoadOrCreateToken(p); !errors.Is(err, smallfile.ErrTooLarge) || !strings.Contains(err.Error(), p) {
			t.Fatalf("token file %s: %v, want smallfile.ErrTooLarge naming it", p, err)
		}
	}
	if _, _, err := LoadOrCreateToken(filepath.Join(dir, "no", "such", "dir", "token")); err == nil || !strings.Contains(err.Error(), "no/such/dir") {
		t.Fatalf("token in a missing directory: %v", err)
	}

	race := filepath.Join(dir, "race")
	toks := make([]string, 8)
	creators := make([]bool, 8)
	var wg sync.WaitGroup
	for i := range toks {
		wg.Go(func() {
			var err error
			if toks[i], creators[i], err = LoadOrCreateToken(race); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	n := 0
	for i := range toks {
		if toks[i] != toks[0] {
			t.Fatalf("concurrent creation gave different tokens: %q", toks)
		}
		if creators[i] {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d callers say they created the file, want 1", n)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// FuzzReadTokenFile: a token file is outside bytes. Any file is refused
// naming it, or read as its first line trimmed, at least MinTokenLength
// bytes, that net/http's own client sends as a bearer token (it refuses
// a header value it could not send).
func FuzzReadTokenFile(f *testing.F) {
	for _, s := range []string{"0123456789abcdef0123456789abcdef\n", "  my-own-token-1 \nsecond line\n", "abc\n", "",
		"token\twith tab\n", "token\x01with-ctl\n", "token-with-del\x7f\n", "tökén-ütf8\r\n", "\n\nlong-token-on-line-3"} {
		f.Add([]byte(s))
	}
	path := filepath.Join(f.TempDir(), "token")
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		tok, err := ReadTokenFile(path)
		if err != nil {
			if !strings.Contains(err.Error(), "token file") {
				t.Fatalf("%q: %v", b, err)
			}
			return
		}
		first, _, _ := strings.Cut(string(b), "\n")
		if tok != strings.TrimSpace(first) || len(tok) < MinTokenLength {
			t.Fatalf("%q read as %q", b, tok)
		}
		req, err := http.NewRequest("GET", "http://127.0.0.1:1/v1/healthz", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		if _, err := (&http.Transport{}).RoundTrip(req); err != nil && strings.Contains(err.Error(), "invalid header") {
			t.Fatalf("token %q read, but net/http cannot send it: %v", tok, err)
		}
	})
}
