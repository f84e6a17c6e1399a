package mqtt

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
)

func TestParsePassword(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		err      error
	}{
		{in: "s3cret", want: "s3cret"},
		{in: "s3cret\n", want: "s3cret"},
		{in: "s3cret\r\n", want: "s3cret"},
		{in: "s3cret\nsecond line\n", want: "s3cret"},
		{in: " spaced pass ", want: " spaced pass "}, // spaces are the password's
		{in: "a\rb\n", want: "a\rb"},                 // only the line's end goes
		{in: "", err: ErrEmptyPassword},
		{in: "\n", err: ErrEmptyPassword},
		{in: "\r\nsecond", err: ErrEmptyPassword},
	} {
		got, err := ParsePassword([]byte(tc.in))
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("%q: got %q, %v; want %q, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// TestParseCA: the configuration trusts the file's CA (the leaf it signed
// verifies against RootCAs) and no other (a leaf of another CA does not).
func TestParseCA(t *testing.T) {
	caPEM, certPEM, _ := certificates(t)
	otherCA, otherPEM, _ := certificates(t)
	leaf := func(b []byte) *x509.Certificate {
		blk, _ := pem.Decode(b)
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, tc := range []struct {
		name       string
		file, leaf []byte
		trusted    bool
		err        error
	}{
		{"its own leaf", caPEM, certPEM, true, nil},
		{"another CA's leaf", caPEM, otherPEM, false, nil},
		{"two CAs in one file", append(append([]byte{}, caPEM...), otherCA...), otherPEM, true, nil},
		{"not PEM", []byte("not a certificate"), nil, false, ErrNoCertificate},
		{"a key only", []byte(strings.Replace(string(caPEM), "CERTIFICATE", "EC PRIVATE KEY", 2)), nil, false, ErrNoCertificate},
	} {
		conf, err := ParseCA(tc.file)
		if tc.err != nil {
			if !errors.Is(err, tc.err) || conf != nil {
				t.Errorf("%s: got %v, %v; want %v", tc.name, conf, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_, verr := leaf(tc.leaf).Verify(x509.VerifyOptions{Roots: conf.RootCAs})
		if (verr == nil) != tc.trusted {
			t.Errorf("%s: verify: %v; want trusted %v", tc.name, verr, tc.trusted)
		}
	}
}

// FuzzParsePassword: any file gives ErrEmptyPassword or a non-empty
// password that begins the file and holds no line end.
func FuzzParsePassword(f *testing.F) {
	for _, s := range []string{"s3cret\n", "a\r\n", "\n", "", "x\ry\nz"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pw, err := ParsePassword(b)
		if err != nil {
			if !errors.Is(err, ErrEmptyPassword) || pw != "" {
				t.Fatalf("%q: %q, %v", b, pw, err)
			}
			return
		}
		if pw == "" || !strings.HasPrefix(string(b), pw) || strings.Contains(pw, "\n") || strings.HasSuffix(pw, "\r") {
			t.Fatalf("%q: password %q", b, pw)
		}
	})
}
