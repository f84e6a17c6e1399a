package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
)

// Access is who may change a served model: the rules of its bearer token
// and of the addresses a server may listen on without one (the options of
// flycl serve, whose flags its errors name). Without a token anyone who
// can reach the address may learn and forget, so a server without one
// listens on loopback only, unless Insecure says that is meant; a
// read-only server takes no changes and may listen anywhere.
type Access struct {
	// TokenFile holds the bearer token (--token-file); when it does not
	// exist it is created with a new random token (LoadOrCreateToken).
	TokenFile string
	// TokenForAll requires the token for every request (--auth-all).
	TokenForAll bool
	// Insecure lets a server without a token listen beyond loopback
	// (--insecure-no-token).
	Insecure bool
	// ReadOnly: the server takes no changes (--read-only).
	ReadOnly bool
}

// Token checks the options and returns the bearer token ("": none) of a
// server to listen at addr (HOST:PORT), before it listens: TokenFile's,
// created when missing (logged, and a file others may read is warned
// about); without one, an address beyond loopback is refused unless
// Insecure or ReadOnly.
func (a Access) Token(ctx context.Context, addr string, log *slog.Logger) (string, error) {
	if a.TokenFile != "" {
		if a.Insecure {
			return "", fmt.Errorf("--insecure-no-token and --token-file %s: give one of them", a.TokenFile)
		}
		tok, created, err := LoadOrCreateToken(a.TokenFile)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		if created {
			log.Info("created a new bearer token (32 random bytes, hex; only you can read the file): clients send it as Authorization: Bearer $(cat FILE)", "file", a.TokenFile)
		}
		if st, err := os.Stat(a.TokenFile); err == nil && st.Mode().Perm()&0o077 != 0 {
			log.Warn("token file is readable by other users", "file", a.TokenFile, "mode", st.Mode().Perm().String())
		}
		return tok, nil
	}
	if a.TokenForAll {
		return "", fmt.Errorf("--auth-all needs --token-file")
	}
	beyond, err := BeyondLoopback(ctx, addr)
	if err != nil {
		return "", err
	}
	if beyond && !a.Insecure && !a.ReadOnly {
		return "", fmt.Errorf("--addr %s listens beyond loopback without a token: give --token-file F (a missing F is created with a new token), or --insecure-no-token to let anyone who can reach it change the model", addr)
	}
	return "", nil
}

// Listening checks the address a server without a token is bound to
// (whatever its name resolved to), once it listens on ln: beyond loopback
// it is refused unless Insecure; else who may change the model is
// warned about. A server with a token, or a read-only one, passes.
func (a Access) Listening(ln net.Listener, addr, token string, log *slog.Logger) error {
	if token != "" || a.ReadOnly {
		return nil
	}
	ip := ln.Addr().(*net.TCPAddr).IP
	if !ip.IsLoopback() && !a.Insecure {
		return fmt.Errorf("--addr %s is bound to %s, beyond loopback, without a token: give --token-file F, or --insecure-no-token", addr, ip)
	}
	where := "any program or user on this machine"
	if !ip.IsLoopback() {
		where = "anyone on the network"
	}
	log.Warn("no --token-file: anyone who can reach this address may change the model (learn, forget): "+where+
		"; give --token-file F (a missing F is created with a new token)", "addr", ln.Addr().String())
	return nil
}

// BeyondLoopback reports whether addr (HOST:PORT) would listen on more
// than the loopback interface: an empty or unspecified host (every
// interface), or a host that is not, or resolves to an address that is
// not, a loopback address.
func BeyondLoopback(ctx context.Context, addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("--addr %q: %w", addr, err)
	}
	if host == "" {
		return true, nil
	}
	if ip := net.ParseIP(host); ip != nil {
		return !ip.IsLoopback(), nil
	}
	ips, err := net.DefaultResolver.LookupIP(ctx, "ip", host)
	if err != nil {
		return false, fmt.Errorf("--addr %q: %w", addr, err)
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return true, nil
		}
	}
	return false, nil
}
