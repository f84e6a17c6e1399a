package fetch

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// answer is a server that answers every request with the fuzzer's status,
// headers and body, and remembers the requests' Range headers.
type answer struct {
	status        int
	contentRange  string
	contentType   string
	contentLength int64
	body          []byte
	ranges        []string
}

func (a *answer) RoundTrip(r *http.Request) (*http.Response, error) {
	a.ranges = append(a.ranges, r.Header.Get("Range"))
	h := http.Header{}
	if a.contentRange != "" {
		h.Set("Content-Range", a.contentRange)
	}
	if a.contentType != "" {
		h.Set("Content-Type", a.contentType)
	}
	return &http.Response{StatusCode: a.status, Header: h, ContentLength: a.contentLength,
		Body: io.NopCloser(bytes.NewReader(a.body)), Request: r}, nil
}

// FuzzFetch downloads an asset with a published digest and size from a
// server whose answer (status, Content-Range, Content-Type, the length it
// announces and the body) is the fuzzer's, over a .part file left by an
// earlier download (the fuzzer's bytes too). Whatever they are, Fetch
// never panics, never makes more attempts than Client.Attempts, asks to
// resume after the bytes of a .part file, and either puts the asset's
// exact bytes at their place (their SHA-256, the published one, computed
// here by the standard library) or fails leaving no file there.
func FuzzFetch(f *testing.F) {
	fx := newFixture(64, 7)
	full := strconv.Itoa(len(fx.data))
	for _, s := range []struct {
		part          []byte
		status        int
		contentRange  string
		contentType   string
		contentLength int64
		body          []byte
	}{
		{nil, 200, "", "application/octet-stream", 64, fx.data},
		{nil, 200, "", "", -1, fx.data},
		{fx.data[:10], 206, "bytes 10-63/" + full, "application/octet-stream", 54, fx.data[10:]},
		{fx.data[:10], 206, "bytes 10-63/*", "", -1, fx.data[10:]},
		{fx.data[:10], 200, "", "", 64, fx.data},                   // the server does not resume
		{fx.data[:10], 206, "bytes 0-63/" + full, "", 64, fx.data}, // nor where asked
		{fx.data[:10], 416, "", "", 0, nil},
		{[]byte("junk junk!"), 206, "bytes 10-63/" + full, "", 54, fx.data[10:]}, // a .part of other bytes
		{nil, 200, "", "text/html; charset=utf-8", 20, []byte("<html>login</html>\n")},
		{nil, 200, "", "", 65, append(fx.data, 0)},
		{nil, 200, "", "", 64, fx.data[:32]}, // cut short
		{nil, 200, "", "", 1 << 50, fx.data}, // a length over the disk's room
		{nil, 503, "", "", 0, nil},
		{nil, 404, "", "", 0, nil},
		{fx.data, 206, "bytes 64-63/" + full, "", 0, nil},
	} {
		f.Add(s.part, uint16(s.status), s.contentRange, s.contentType, s.contentLength, s.body)
	}
	f.Fuzz(func(t *testing.T, part []byte, status uint16, contentRange, contentType string, contentLength int64, body []byte) {
		dir := t.TempDir()
		a := asset("http://assets.test/thing.bin", fx, Digest{"sha256", fx.sha})
		final := filepath.Join(dir, a.File)
		if len(part) > 0 {
			if err := os.WriteFile(final+".part", part, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ans := &answer{status: int(status), contentRange: contentRange, contentType: contentType,
			contentLength: max(contentLength, -1), body: body}
		c := quick()
		c.Transport = ans
		c.FreeSpace = func(string) (uint64, error) { return 1 << 40, nil }
		res, err := c.Fetch(context.Background(), a, dir)
		if len(ans.ranges) > c.Attempts {
			t.Fatalf("%d requests, at most %d attempts", len(ans.ranges), c.Attempts)
		}
		if want := "bytes=" + strconv.Itoa(len(part)) + "-"; len(part) > 0 && ans.ranges[0] != want {
			t.Fatalf("first request's Range %q over a .part of %d bytes, want %q", ans.ranges[0], len(part), want)
		}
		got, rerr := os.ReadFile(final)
		if err != nil {
			if rerr == nil {
				t.Fatalf("failed (%v) but left %d bytes at %s", err, len(got), final)
			}
			return
		}
		if !bytes.Equal(got, fx.data) || res.SHA256 != fx.sha || res.Size != int64(len(fx.data)) || !res.Downloaded {
			t.Fatalf("fetched %d bytes (%+v), want the asset's %d", len(got), res, len(fx.data))
		}
		if _, err := os.Stat(final + ".part"); err == nil {
			t.Fatalf("a .part left beside the fetched file")
		}
	})
}

// FuzzContentRange: a server's Content-Range header never panics the
// parser; what it accepts is "bytes START-END/SIZE" (SIZE "*" read as -1)
// with 0 ≤ START ≤ END < SIZE, written back as the same header.
func FuzzContentRange(f *testing.F) {
	for _, s := range []string{"bytes 10-63/64", "bytes 10-63/*", "bytes 0-0/1", "bytes 5-4/10", "bytes 0-9/5",
		"bytes -1-3/4", "bytes 1-2", "items 1-2/3", "bytes 9223372036854775806-9223372036854775806/9223372036854775807", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		start, size, ok := contentRange(s)
		if !ok {
			return
		}
		r, sz, _ := strings.Cut(strings.TrimPrefix(s, "bytes "), "/")
		_, e, _ := strings.Cut(r, "-")
		end, err := strconv.ParseInt(e, 10, 64)
		if err != nil || start < 0 || end < start || (size != -1 && size <= end) || (size == -1) != (sz == "*") {
			t.Fatalf("%q: start %d, end %q, size %d", s, start, e, size)
		}
		again := "bytes " + strconv.FormatInt(start, 10) + "-" + strconv.FormatInt(end, 10) + "/" + sz
		if s2, z2, ok := contentRange(again); !ok || s2 != start || z2 != size {
			t.Fatalf("%q accepted as %d/%d; written back as %q: %d/%d %v", s, start, size, again, s2, z2, ok)
		}
	})
}
