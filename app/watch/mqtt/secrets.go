package mqtt

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	"github.com/flycl/flycl/internal/smallfile"
)

var (
	// ErrEmptyPassword: a password file whose first line is empty.
	ErrEmptyPassword = errors.New("its first line is empty")
	// ErrNoCertificate: a CA file without a PEM certificate.
	ErrNoCertificate = errors.New("no PEM certificate in it")
)

// ParsePassword returns the password a password file holds: its first
// line, without the line's end ("\n" or "\r\n"). An empty first line is
// ErrEmptyPassword.
func ParsePassword(b []byte) (string, error) {
	pw, _, _ := strings.Cut(string(b), "\n")
	if pw = strings.TrimRight(pw, "\r"); pw == "" {
		return "", ErrEmptyPassword
	}
	return pw, nil
}

// ParseCA returns the TLS configuration (Options.TLS) that trusts the
// PEM certificates of a CA file, the certificates of an mqtts:// broker's
// signer. A file without one is ErrNoCertificate.
func ParseCA(pem []byte) (*tls.Config, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, ErrNoCertificate
	}
	return &tls.Config{RootCAs: pool}, nil
}

// ReadPasswordFile reads the password a password file holds
// (ParsePassword), reading at most smallfile.SecretLimit bytes: a larger
// file (or /dev/zero) is refused (smallfile.ErrTooLarge) without being
// read whole.
func ReadPasswordFile(name string) (string, error) {
	b, err := smallfile.Read(name, smallfile.SecretLimit)
	if err != nil {
		return "", err
	}
	pw, err := ParsePassword(b)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return pw, nil
}
