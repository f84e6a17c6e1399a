package server

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAccessToken checks the token and address rules of Access.Token case
// by case against what each says: a token file is read (or created, once,
// readable by its owner only) and excludes Insecure; TokenForAll needs a
// token; without one, an address beyond loopback (every interface, an
// unspecified host, a non-loopback IP) is refused unless Insecure or
// ReadOnly, and a loopback one (an IP, or localhost resolved) passes.
func TestAccessToken(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing")
	if err := os.WriteFile(existing, []byte("0123456789abcdef\nignored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	created := filepath.Join(dir, "created")
	for _, c := range []struct {
		name  string
		a     Access
		addr  string
		token string // "*": a new random one (64 hex digits)
		err   string // a refusal naming this
	}{
		{"token file read", Access{TokenFile: existing}, "0.0.0.0:8080", "0123456789abcdef", ""},
		{"missing token file created", Access{TokenFile: created}, ":8080", "*", ""},
		{"token file and insecure", Access{TokenFile: existing, Insecure: true}, "127.0.0.1:0", "", "give one of them"},
		{"auth-all without a token", Access{TokenForAll: true}, "127.0.0.1:0", "", "--auth-all needs --token-file"},
		{"every interface, no token", Access{}, "0.0.0.0:0", "", "beyond loopback without a token"},
		{"unspecified host, no token", Access{}, ":0", "", "beyond loopback without a token"},
		{"IPv6 every interface, no token", Access{}, "[::]:0", "", "beyond loopback without a token"},
		{"another IP, no token", Access{}, "192.0.2.1:80", "", "beyond loopback without a token"},
		{"every interface, insecure", Access{Insecure: true}, "0.0.0.0:0", "", ""},
		{"every interface, read-only", Access{ReadOnly: true}, "0.0.0.0:0", "", ""},
		{"loopback IP", Access{}, "127.0.0.1:0", "", ""},
		{"IPv6 loopback", Access{}, "[::1]:0", "", ""},
		{"localhost", Access{}, "localhost:0", "", ""},
		{"no port", Access{}, "127.0.0.1", "", "missing port"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log bytes.Buffer
			tok, err := c.a.Token(context.Background(), c.addr, slog.New(slog.NewTextHandler(&log, nil)))
			switch {
			case c.err != "":
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("token %q, error %v; want an error naming %q", tok, err, c.err)
				}
				return
			case err != nil:
				t.Fatal(err)
			case c.token == "*":
				b, err := os.ReadFile(c.a.TokenFile)
				st, serr := os.Stat(c.a.TokenFile)
				if err != nil || serr != nil || len(tok) != 64 || strings.TrimSpace(string(b)) != tok || st.Mode().Perm() != 0o600 {
					t.Fatalf("token %q; file %q (%v, %v)", tok, b, err, serr)
				}
				if !strings.Contains(log.String(), "created a new bearer token") {
					t.Errorf("creation not logged: %s", log.String())
				}
			case tok != c.token:
				t.Fatalf("token %q, want %q", tok, c.token)
			}
		})
	}
	// a token file others may read is warned about
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(open, []byte("0123456789abcdef\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	if _, err := (Access{TokenFile: open}).Token(context.Background(), "127.0.0.1:0", slog.New(slog.NewTextHandler(&log, nil))); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "token file is readable by other users") {
		t.Errorf("no warning for a token file of mode 0644: %s", log.String())
	}
}

// TestAccessListening: once bound, a server without a token on loopback
// is warned about (anyone on this machine may change the model); with a
// token, or read-only, nothing is said. (Binding beyond loopback is not
// tried here: tests listen on 127.0.0.1 only.)
func TestAccessListening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, c := range []struct {
		a     Access
		token string
		warn  string
	}{
		{Access{}, "", "any program or user on this machine"},
		{Access{Insecure: true}, "", "any program or user on this machine"},
		{Access{}, "0123456789abcdef", ""},
		{Access{ReadOnly: true}, "", ""},
	} {
		var log bytes.Buffer
		if err := c.a.Listening(ln, "127.0.0.1:0", c.token, slog.New(slog.NewTextHandler(&log, nil))); err != nil {
			t.Fatalf("%+v: %v", c.a, err)
		}
		if got := log.String(); (c.warn == "") != (got == "") || !strings.Contains(got, c.warn) {
			t.Errorf("%+v token %q: log %q, want a warning with %q", c.a, c.token, got, c.warn)
		}
	}
}
