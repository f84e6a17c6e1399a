package fetch

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// fixture is a file the test server serves, with its digests computed here
// by the standard library (the independent truth for Fetch's checks).
type fixture struct {
	data     []byte
	sha, md5 string
}

func newFixture(n int, seed uint64) fixture {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	s := sha256.Sum256(b)
	m := md5.Sum(b)
	return fixture{b, hex.EncodeToString(s[:]), hex.EncodeToString(m[:])}
}

// server is an httptest server on 127.0.0.1 that counts requests and
// remembers their Range headers.
type server struct {
	*httptest.Server
	mu     sync.Mutex
	ranges []string
	n      atomic.Int32
}

func newServer(t *testing.T, h func(w http.ResponseWriter, r *http.Request, n int)) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(s.n.Add(1))
		s.mu.Lock()
		s.ranges = append(s.ranges, r.Header.Get("Range"))
		s.mu.Unlock()
		h(w, r, n)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) requests() int { return int(s.n.Load()) }

func (s *server) rangeHeaders() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ranges...)
}

// serve answers with the file, honouring Range (http.ServeContent).
func serve(f fixture) func(http.ResponseWriter, *http.Request, int) {
	return func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "application/octet-stream")
		http.ServeContent(w, r, "f.bin", time.Time{}, bytes.NewReader(f.data))
	}
}

// cut sends the full Content-Length, then only the first n bytes, and
// drops the connection.
func cut(w http.ResponseWriter, f fixture, n int) {
	w.Header().Set("Content-Length", fmt.Sprint(len(f.data)))
	w.Header().Set("Content-Type", "application/octet-stream")
	w.WriteHeader(http.StatusOK)
	w.Write(f.data[:n])
	w.(http.Flusher).Flush()
	panic(http.ErrAbortHandler)
}

// quick is a Client with short timeouts and backoff for tests.
func quick() *Client {
	return &Client{Attempts: 3, Backoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond,
		StallTimeout: 2 * time.Second, ConnectTimeout: 2 * time.Second,
		FreeSpace: func(string) (uint64, error) { return 1 << 40, nil }}
}

func asset(u string, f fixture, d Digest) Asset {
	return Asset{Name: "thing", File: "thing.bin", URLs: []string{u}, Digest: d, Size: int64(len(f.data)), Spec: "folder"}
}

func mustFile(t *testing.T, p string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes differ from the %d served", p, len(got), len(want))
	}
}

func mustNotExist(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: exists (or %v), want absent", p, err)
		}
	}
}

func TestFetchDownloadsAndVerifies(t *testing.T) {
	f := newFixture(300<<10, 1)
	for _, d := range []Digest{{"sha256", f.sha}, {"md5", f.md5}} {
		t.Run(d.Algo, func(t *testing.T) {
			s := newServer(t, serve(f))
			dir := t.TempDir()
			c := quick()
			var ps []Progress
			c.Progress = func(p Progress) { ps = append(ps, p) }
			a := asset(s.URL+"/f.bin", f, d)
			res, err := c.Fetch(context.Background(), a, dir)
			if err != nil {
				t.Fatal(err)
			}
			mustFile(t, filepath.Join(dir, a.File), f.data)
			mustNotExist(t, filepath.Join(dir, a.File+".part"), filepath.Join(dir, LockName))
			if !res.Downloaded || res.Resumed || res.Recorded || res.SHA256 != f.sha || res.Verified != d || res.Size != int64(len(f.data)) {
				t.Errorf("result %+v", res)
			}
			last := ps[len(ps)-1]
			if last.Done != int64(len(f.data)) || last.Total != int64(len(f.data)) {
				t.Errorf("last progress %+v, want done = total = %d", last, len(f.data))
			}
			for i := 1; i < len(ps); i++ {
				if ps[i].Done < ps[i-1].Done {
					t.Fatalf("progress went back: %+v after %+v", ps[i], ps[i-1])
				}
			}
			// Again: the file is there and verified, nothing is requested.
			res, err = c.Fetch(context.Background(), a, dir)
			if err != nil || res.Downloaded || res.SHA256 != f.sha {
				t.Fatalf("second fetch: %+v, %v", res, err)
			}
			if s.requests() != 1 {
				t.Errorf("%d requests, want 1", s.requests())
			}
		})
	}
}

func TestFetchResumesAfterCutConnection(t *testing.T) {
	f := newFixture(400<<10, 2)
	const first = 150 << 10
	// Within one run: the first response is cut, the retry resumes.
	// Across runs: with one attempt the .part file stays and the next run
	// resumes it.
	for _, tc := range []struct {
		name     string
		attempts int
	}{{"retry", 3}, {"next run", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 1 {
					cut(w, f, first)
				}
				serve(f)(w, r, n)
			})
			dir := t.TempDir()
			c := quick()
			c.Attempts = tc.attempts
			a := asset(s.URL+"/f.bin", f, Digest{"sha256", f.sha})
			res, err := c.Fetch(context.Background(), a, dir)
			if tc.attempts == 1 {
				if err == nil {
					t.Fatal("a cut connection with one attempt succeeded")
				}
				mustNotExist(t, filepath.Join(dir, a.File))
				if n := partSize(filepath.Join(dir, a.File+".part")); n != first {
					t.Fatalf(".part holds %d bytes, want the %d received", n, first)
				}
				res, err = c.Fetch(context.Background(), a, dir)
			}
			if err != nil {
				t.Fatal(err)
			}
			mustFile(t, filepath.Join(dir, a.File), f.data)
			rs := s.rangeHeaders()
			if len(rs) != 2 || rs[0] != "" || rs[1] != fmt.Sprintf("bytes=%d-", first) {
				t.Errorf("Range headers %q, want none then bytes=%d-", rs, first)
			}
			if !res.Resumed {
				t.Error("result does not say resumed")
			}
		})
	}
}

func TestFetchServerWithoutRange(t *testing.T) {
	f := newFixture(200<<10, 3)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			cut(w, f, 70<<10)
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(f.data)))
		w.Write(f.data) // ignores Range: 200 with everything
	})
	dir := t.TempDir()
	c := quick()
	var notes []string
	c.Notice = func(_, m string) { notes = append(notes, m) }
	res, err := c.Fetch(context.Background(), asset(s.URL+"/f", f, Digest{"sha256", f.sha}), dir)
	if err != nil {
		t.Fatal(err)
	}
	mustFile(t, filepath.Join(dir, "thing.bin"), f.data)
	if res.Resumed || !strings.Contains(strings.Join(notes, "\n"), "starting again from byte 0") {
		t.Errorf("resumed %v, notices %q: want a restart from 0", res.Resumed, notes)
	}
	if rs := s.rangeHeaders(); len(rs) != 2 || rs[1] == "" {
		t.Errorf("Range headers %q: the retry should have asked for a range", rs)
	}
}

func TestFetchWrongRangeRestarts(t *testing.T) {
	f := newFixture(100<<10, 4)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		switch n {
		case 1:
			cut(w, f, 30<<10)
		case 2: // a range that does not start where asked
			w.Header().Set("Content-Range", fmt.Sprintf("bytes 10-%d/%d", len(f.data)-1, len(f.data)))
			w.WriteHeader(http.StatusPartialContent)
			w.Write(f.data[10:])
		default:
			serve(f)(w, r, n)
		}
	})
	dir := t.TempDir()
	if _, err := quick().Fetch(context.Background(), asset(s.URL+"/f", f, Digest{"sha256", f.sha}), dir); err != nil {
		t.Fatal(err)
	}
	mustFile(t, filepath.Join(dir, "thing.bin"), f.data)
	if rs := s.rangeHeaders(); len(rs) != 3 || rs[2] != "" {
		t.Errorf("Range headers %q: after a wrong range the whole file should be asked for", rs)
	}
}

func TestFetchWrongDigest(t *testing.T) {
	f := newFixture(64<<10, 5)
	s := newServer(t, serve(f))
	dir := t.TempDir()
	want := strings.Repeat("ab", 32)
	_, err := quick().Fetch(context.Background(), asset(s.URL+"/f", f, Digest{"sha256", want}), dir)
	var de *DigestError
	if !errors.As(err, &de) || de.Want != want || de.Got != f.sha || de.TrustOnFirstUse {
		t.Fatalf("error %v, want a *DigestError want %s got %s", err, want, f.sha)
	}
	mustNotExist(t, filepath.Join(dir, "thing.bin"), filepath.Join(dir, "thing.bin.part"))
	if s.requests() != 1 {
		t.Errorf("%d requests: a wrong digest is not retried", s.requests())
	}
}

func TestFetchHTTPStatus(t *testing.T) {
	f := newFixture(10<<10, 6)
	for _, tc := range []struct {
		name     string
		statuses []int // per request; then the file
		requests int
		status   int // the error's status, 0: success
	}{
		{"404 fails at once", []int{404}, 1, 404},
		{"500 retried then fails", []int{500, 500, 500}, 3, 500},
		{"503 then success", []int{503}, 2, 0},
		{"429 then success", []int{429}, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n <= len(tc.statuses) {
					http.Error(w, "no", tc.statuses[n-1])
					return
				}
				serve(f)(w, r, n)
			})
			dir := t.TempDir()
			_, err := quick().Fetch(context.Background(), asset(s.URL+"/f", f, Digest{"md5", f.md5}), dir)
			if s.requests() != tc.requests {
				t.Errorf("%d requests, want %d", s.requests(), tc.requests)
			}
			if tc.status == 0 {
				if err != nil {
					t.Fatal(err)
				}
				mustFile(t, filepath.Join(dir, "thing.bin"), f.data)
				return
			}
			var he *HTTPError
			if !errors.As(err, &he) || he.Status != tc.status {
				t.Fatalf("error %v, want HTTP %d", err, tc.status)
			}
			mustNotExist(t, filepath.Join(dir, "thing.bin"))
		})
	}
}

func TestFetchStallTimeout(t *testing.T) {
	f := newFixture(64<<10, 7)
	for _, tc := range []struct {
		name    string
		headers bool // send headers and some bytes before stalling
	}{{"no headers", false}, {"mid-body", true}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if tc.headers {
					w.Header().Set("Content-Length", fmt.Sprint(len(f.data)))
					w.WriteHeader(200)
					w.Write(f.data[:1000])
					w.(http.Flusher).Flush()
				}
				<-r.Context().Done() // the client gives up
			})
			dir := t.TempDir()
			c := quick()
			c.Attempts = 2
			c.StallTimeout = 50 * time.Millisecond
			_, err := c.Fetch(context.Background(), asset(s.URL+"/f", f, Digest{"md5", f.md5}), dir)
			var se *StallError
			if !errors.As(err, &se) || se.After != c.StallTimeout {
				t.Fatalf("error %v, want a *StallError after %v", err, c.StallTimeout)
			}
			if s.requests() != 2 {
				t.Errorf("%d requests, want 2 (a stall is retried)", s.requests())
			}
			mustNotExist(t, filepath.Join(dir, "thing.bin"))
		})
	}
}

func TestFetchRedirect(t *testing.T) {
	f := newFixture(50<<10, 8)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new/f.bin", http.StatusFound)
			return
		}
		if r.URL.Path != "/new/f.bin" {
			http.NotFound(w, r)
			return
		}
		serve(f)(w, r, n)
	})
	dir := t.TempDir()
	if _, err := quick().Fetch(context.Background(), asset(s.URL+"/old", f, Digest{"sha256", f.sha}), dir); err != nil {
		t.Fatal(err)
	}
	mustFile(t, filepath.Join(dir, "thing.bin"), f.data)
	if s.requests() != 2 {
		t.Errorf("%d requests, want 2 (the redirect and the file)", s.requests())
	}
}

func TestFetchFullDisk(t *testing.T) {
	f := newFixture(100<<10, 9)
	t.Run("free space checked first", func(t *testing.T) {
		s := newServer(t, serve(f))
		dir := t.TempDir()
		c := quick()
		c.FreeSpace = func(string) (uint64, error) { return 1000, nil }
		_, err := c.Fetch(context.Background(), asset(s.URL+"/f", f, Digest{"sha256", f.sha}), dir)
		var se *SpaceError
		if !errors.As(err, &se) || se.Free != 1000 || se.Need != uint64(len(f.data)) {
			t.Fatalf("error %v, want a *SpaceError needing %d", err, len(f.data))
		}
		if s.requests() != 0 {
			t.Errorf("%d requests before the space check failed", s.requests())
		}
	})
	t.Run("size from the server", func(t *testing.T) {
		s := newServer(t, serve(f))
		dir := t.TempDir()
		c := quick()
		c.FreeSpace = func(string) (uint64, error) { return 1000, nil }
		a := asset(s.URL+"/f", f, Digest{"sha256", f.sha})
		a.Size = 0 // not published: the check waits for Content-Length
		_, err := c.Fetch(context.Background(), a, dir)
		var se *SpaceError
		if !errors.As(err, &se) || s.requests() != 1 {
			t.Fatalf("error %v after %d requests, want a *SpaceError after 1", err, s.requests())
		}
		mustNotExist(t, filepath.Join(dir, "thing.bin"))
	})
	t.Run("write fails", func(t *testing.T) {
		s := newServer(t, serve(f))
		dir := t.TempDir()
		c := quick()
		c.wrapWrite = func(w io.Writer) io.Writer { return &failAfter{w: w, n: 20 << 10} }
		_, err := c.Fetch(context.Background(), asset(s.URL+"/f", f, Digest{"sha256", f.sha}), dir)
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("error %v, want ENOSPC", err)
		}
		if s.requests() != 1 {
			t.Errorf("%d requests: a full disk is not retried", s.requests())
		}
		mustNotExist(t, filepath.Join(dir, "thing.bin"), filepath.Join(dir, "thing.bin.part"))
	})
}

// failAfter writes n bytes, then fails as a full disk does.
type failAfter struct {
	w io.Writer
	n int
}

func (f *failAfter) Write(b []byte) (int, error) {
	if len(b) <= f.n {
		f.n -= len(b)
		return f.w.Write(b)
	}
	m, _ := f.w.Write(b[:f.n])
	f.n = 0
	return m, &os.PathError{Op: "write", Path: "thing.bin.part", Err: syscall.ENOSPC}
}

func TestFetchThroughProxy(t *testing.T) {
	f := newFixture(40<<10, 10)
	// The asset's host does not exist; only the proxy (on 127.0.0.1) can
	// answer, so a success means the request went through it.
	proxy := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.URL.Host != "assets.flycl.test" || !r.URL.IsAbs() {
			http.Error(w, "not a proxy request: "+r.URL.String(), 400)
			return
		}
		serve(f)(w, r, n)
	})
	pu, _ := url.Parse(proxy.URL)
	c := quick()
	c.Proxy = http.ProxyURL(pu)
	dir := t.TempDir()
	if _, err := c.Fetch(context.Background(), asset("http://assets.flycl.test/f.bin", f, Digest{"sha256", f.sha}), dir); err != nil {
		t.Fatal(err)
	}
	mustFile(t, filepath.Join(dir, "thing.bin"), f.data)
	if proxy.requests() != 1 {
		t.Errorf("proxy saw %d requests, want 1", proxy.requests())
	}
}

func TestFetchTrustOnFirstUse(t *testing.T) {
	f1, f2 := newFixture(30<<10, 11), newFixture(30<<10, 12)
	var current atomic.Pointer[fixture]
	current.Store(&f1)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) { serve(*current.Load())(w, r, n) })
	dir := t.TempDir()
	c := quick()
	var notes []string
	c.Notice = func(_, m string) { notes = append(notes, m) }
	a := asset(s.URL+"/f", f1, Digest{})
	a.Size = 0
	res, err := c.Fetch(context.Background(), a, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Recorded || res.Verified != (Digest{"sha256", f1.sha}) {
		t.Fatalf("first download: %+v, want its SHA-256 recorded", res)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "trust on first use") {
		t.Errorf("notices %q do not say trust on first use", notes)
	}
	l, err := ReadLock(dir)
	if err != nil || l.Files["thing.bin"].SHA256 != f1.sha || l.Files["thing.bin"].Size != int64(len(f1.data)) {
		t.Fatalf("lock %+v, %v; want thing.bin at %s", l, err, f1.sha)
	}
	// Present and matching the lock: verified, not recorded again.
	if res, err = c.Fetch(context.Background(), a, dir); err != nil || res.Recorded || res.Downloaded {
		t.Fatalf("second fetch: %+v, %v", res, err)
	}
	// The server now sends other bytes: the lock catches it.
	os.Remove(filepath.Join(dir, "thing.bin"))
	current.Store(&f2)
	_, err = c.Fetch(context.Background(), a, dir)
	var de *DigestError
	if !errors.As(err, &de) || !de.TrustOnFirstUse || de.Want != f1.sha || de.Got != f2.sha {
		t.Fatalf("error %v, want a first-use *DigestError", err)
	}
	mustNotExist(t, filepath.Join(dir, "thing.bin"), filepath.Join(dir, "thing.bin.part"))
}

func TestFetchRefusesOtherFiles(t *testing.T) {
	f := newFixture(20<<10, 13)
	t.Run("size", func(t *testing.T) {
		s := newServer(t, serve(f))
		a := asset(s.URL+"/f", f, Digest{"sha256", f.sha})
		a.Size++
		_, err := quick().Fetch(context.Background(), a, t.TempDir())
		var se *SizeError
		if !errors.As(err, &se) || se.Got != int64(len(f.data)) || s.requests() != 1 {
			t.Fatalf("error %v after %d requests, want one *SizeError", err, s.requests())
		}
	})
	t.Run("html", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, "<html>confirm</html>")
		})
		a := asset(s.URL+"/f", f, Digest{"sha256", f.sha})
		a.Size = 0
		dir := t.TempDir()
		_, err := quick().Fetch(context.Background(), a, dir)
		if !errors.Is(err, ErrHTML) || s.requests() != 1 {
			t.Fatalf("error %v after %d requests, want ErrHTML at once", err, s.requests())
		}
		mustNotExist(t, filepath.Join(dir, "thing.bin"))
	})
	t.Run("present file differs", func(t *testing.T) {
		s := newServer(t, serve(f))
		dir := t.TempDir()
		p := filepath.Join(dir, "thing.bin")
		os.WriteFile(p, []byte("corrupt"), 0o644)
		res, err := quick().Fetch(context.Background(), asset(s.URL+"/f", f, Digest{"sha256", f.sha}), dir)
		if err != nil || !res.Downloaded {
			t.Fatalf("%+v, %v: want a new download", res, err)
		}
		mustFile(t, p, f.data)
	})
}

func TestFetchCancelKeepsPart(t *testing.T) {
	f := newFixture(100<<10, 14)
	ctx, cancel := context.WithCancel(context.Background())
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Length", fmt.Sprint(len(f.data)))
		w.WriteHeader(200)
		w.Write(f.data[:40<<10])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	c := quick()
	c.Progress = func(p Progress) {
		if p.Done > 0 {
			cancel()
		}
	}
	dir := t.TempDir()
	_, err := c.Fetch(ctx, asset(s.URL+"/f", f, Digest{"sha256", f.sha}), dir)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	part, _ := os.ReadFile(filepath.Join(dir, "thing.bin.part"))
	if len(part) == 0 || len(part) > 40<<10 || !bytes.Equal(part, f.data[:len(part)]) {
		t.Errorf(".part holds %d bytes: want a prefix of what was sent (%d bytes)", len(part), 40<<10)
	}
	if s.requests() != 1 {
		t.Errorf("%d requests after a cancel, want 1", s.requests())
	}
}

func TestContentRange(t *testing.T) {
	for _, tc := range []struct {
		in          string
		start, size int64
		ok          bool
	}{
		{"bytes 0-9/10", 0, 10, true},
		{"bytes 5-9/*", 5, -1, true},
		{"bytes 5-9/9", 0, 0, false},
		{"bytes 9-5/10", 0, 0, false},
		{"bytes -1-5/10", 0, 0, false},
		{"items 0-9/10", 0, 0, false},
		{"bytes 0-9", 0, 0, false},
	} {
		start, size, ok := contentRange(tc.in)
		if ok != tc.ok || ok && (start != tc.start || size != tc.size) {
			t.Errorf("contentRange(%q) = %d, %d, %v; want %d, %d, %v", tc.in, start, size, ok, tc.start, tc.size, tc.ok)
		}
	}
}
