package fetch

import (
	"context"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Client downloads assets. The zero Client is ready to use: direct
// connections (no proxy), 5 attempts per URL, backoff from 1 s to 1 min,
// a 30 s connect and a 60 s stall timeout.
type Client struct {
	// Proxy chooses the proxy for a request (nil: none). flycl passes
	// http.ProxyFromEnvironment, which reads HTTPS_PROXY, HTTP_PROXY and
	// NO_PROXY.
	Proxy func(*http.Request) (*url.URL, error)
	// ConnectTimeout bounds connecting and the TLS handshake (0: 30 s).
	ConnectTimeout time.Duration
	// StallTimeout fails an attempt that receives no byte (headers or body)
	// for this long (0: 60 s).
	StallTimeout time.Duration
	// Attempts per URL for failures that may pass: network errors, stalls,
	// HTTP 5xx, 408 and 429 (0: 5). Other failures are not retried.
	Attempts int
	// Backoff is the wait before the second attempt, doubled before each
	// further one up to MaxBackoff (0: 1 s and 1 min).
	Backoff, MaxBackoff time.Duration
	// Progress, if set, is called as bytes arrive (at most every 100 ms,
	// and once at the end of each attempt).
	Progress func(Progress)
	// Notice, if set, receives what a user should know: a resumed or
	// restarted download, a retry, a digest recorded on first use.
	Notice func(asset, msg string)
	// FreeSpace measures the room in a folder (nil: the package's
	// FreeSpace). An error skips the check.
	FreeSpace func(dir string) (uint64, error)
	// Transport, if set, replaces the transport built from Proxy and
	// ConnectTimeout.
	Transport http.RoundTripper
	// UserAgent is sent with every request (empty: "flycl-fetch").
	UserAgent string

	// wrapWrite, in tests, wraps the writer of the .part file.
	wrapWrite func(io.Writer) io.Writer
}

// Progress is the state of a download.
type Progress struct {
	Asset string
	File  string
	Done  int64 // bytes in the .part file
	Total int64 // the file's size; 0 if not known yet
	Rate  float64
	// ETA is the time left at Rate (-1 if not known).
	ETA time.Duration
}

// Result says what Fetch did.
type Result struct {
	Asset Asset
	// Path is the file, or for a split archive the converted folder.
	Path string
	Size int64
	// SHA256 of the file (empty when a converted split was verified
	// without its archive).
	SHA256 string
	// Verified is the digest the file was checked against: the published
	// one, or the one recorded on first use.
	Verified Digest
	// Downloaded: the file was downloaded now (else it was there and
	// verified). Resumed: the download continued an earlier .part file.
	Downloaded, Resumed bool
	// Recorded: the asset has no published digest and its SHA-256 was
	// recorded in the lock file now (trust on first use).
	Recorded bool
	// Split is the converted folder's listing, for a split archive.
	Split *Listing
}

func (c *Client) attempts() int          { return cmp0(c.Attempts, 5) }
func (c *Client) stall() time.Duration   { return cmp0(c.StallTimeout, 60*time.Second) }
func (c *Client) connect() time.Duration { return cmp0(c.ConnectTimeout, 30*time.Second) }

func cmp0[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

func (c *Client) notice(a Asset, format string, args ...any) {
	if c.Notice != nil {
		c.Notice(a.Name, fmt.Sprintf(format, args...))
	}
}

func (c *Client) httpClient() *http.Client {
	t := c.Transport
	if t == nil {
		d := &net.Dialer{Timeout: c.connect(), KeepAlive: 30 * time.Second}
		t = &http.Transport{
			Proxy:               c.Proxy,
			DialContext:         d.DialContext,
			TLSHandshakeTimeout: c.connect(),
			// Waiting for headers is bounded by the stall timer of attempt.
			ForceAttemptHTTP2: true,
			// The body is read as it comes; a gzip Content-Encoding would
			// change the bytes counted against Range and the digest.
			DisableCompression: true,
		}
	}
	return &http.Client{Transport: t}
}

// Fetch makes sure asset a is in dir, verified: a file already there is
// checked; otherwise it is downloaded (resuming dir/FILE.part if there is
// one). For a split archive it also converts the archive into its folder
// (see ConvertSplit). ctx cancels the download; the .part file is kept for
// the next run.
func (c *Client) Fetch(ctx context.Context, a Asset, dir string) (*Result, error) {
	if err := checkName(a.File); err != nil {
		return nil, fmt.Errorf("fetch: %s: file: %w", a.Name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	res := &Result{Asset: a, Path: a.Path(dir)}
	if a.Split != "" {
		done, err := c.verifySplitFolder(a, dir, res)
		if done || err != nil {
			return res, err
		}
	}
	want := a.Digest
	lock, err := ReadLock(dir)
	if err != nil {
		return nil, err
	}
	locked, isLocked := lock.Files[a.File]
	if want.IsZero() && isLocked {
		want = Digest{"sha256", locked.SHA256}
	}
	final := filepath.Join(dir, a.File)
	if st, err := os.Stat(final); err == nil && st.Mode().IsRegular() {
		sha, alt, err := hashFile(final, want.Algo)
		if err != nil {
			return nil, err
		}
		switch {
		case want.IsZero():
			if err := a.CheckFirstUse(final, st.Size()); err != nil {
				return nil, fmt.Errorf("%w: remove %s to download it again", err, final)
			}
			if err := c.record(a, dir, sha, st.Size(), "(file found in the folder)"); err != nil {
				return nil, err
			}
			res.Recorded = true
			want = Digest{"sha256", sha}
			fallthrough
		case alt == want.Hex:
			res.Size, res.SHA256, res.Verified = st.Size(), sha, want
			return res, c.split(ctx, a, dir, res)
		default:
			c.notice(a, "%s is there but its %s is %s, want %s: downloading it again", final, want.Algo, alt, want.Hex)
		}
	} else if err == nil {
		return nil, fmt.Errorf("fetch: %s is not a regular file", final)
	}

	if len(a.URLs) == 0 {
		return nil, fmt.Errorf("fetch: %s: no URL", a.Name)
	}
	part := final + ".part"
	var d *download
	var errs []error
	for _, u := range a.URLs {
		d, err = c.download(ctx, a, u, part, want.Algo)
		if err == nil {
			break
		}
		errs = append(errs, err)
		if ctx.Err() != nil || !tryNextURL(err) {
			break
		}
	}
	if err != nil {
		if len(errs) > 1 {
			return nil, errors.Join(errs...)
		}
		return nil, err
	}
	res.Downloaded, res.Resumed, res.Size, res.SHA256 = true, d.resumed, d.size, d.sha
	if want.IsZero() {
		if err := a.CheckFirstUse(part, d.size); err != nil {
			os.Remove(part)
			return nil, fmt.Errorf("%w; the download was removed", err)
		}
		want = Digest{"sha256", d.sha}
		res.Recorded = true
	} else if d.alt != want.Hex {
		os.Remove(part)
		return nil, &DigestError{File: a.File, Algo: want.Algo, Want: want.Hex, Got: d.alt, TrustOnFirstUse: a.Digest.IsZero()}
	}
	res.Verified = want
	if err := os.Rename(part, final); err != nil {
		os.Remove(part)
		return nil, fmt.Errorf("fetch: %w", err)
	}
	syncDir(dir)
	if res.Recorded {
		if err := c.record(a, dir, d.sha, d.size, d.url); err != nil {
			return nil, err
		}
	}
	return res, c.split(ctx, a, dir, res)
}

// record writes a first-use digest into dir's lock file.
func (c *Client) record(a Asset, dir, sha string, size int64, from string) error {
	err := updateLock(dir, func(l *Lock) {
		l.Files[a.File] = LockedFile{SHA256: sha, Size: size, URL: from, Recorded: time.Now().UTC().Format(time.RFC3339)}
	})
	if err == nil {
		c.notice(a, "no published digest: recorded SHA-256 %s of %s in %s (trust on first use; later downloads are checked against it)",
			sha, a.File, filepath.Join(dir, LockName))
	}
	return err
}

// tryNextURL reports whether another URL (a mirror) may succeed after err.
func tryNextURL(err error) bool {
	var de *DigestError
	var se *SpaceError
	var we *writeError
	return !errors.As(err, &de) && !errors.As(err, &se) && !errors.As(err, &we)
}

// download is a finished download in the .part file.
type download struct {
	url      string
	size     int64
	sha, alt string // SHA-256, and the digest of algo (= sha for sha256)
	resumed  bool
}

// errRestart: the .part file was discarded; start again.
var errRestart = errors.New("fetch: starting the download again")

// writeError is a failure to write the .part file (a full disk).
type writeError struct{ err error }

func (e *writeError) Error() string { return "fetch: writing: " + e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// download fetches url into part, with retries.
func (c *Client) download(ctx context.Context, a Asset, u, part, algo string) (*download, error) {
	st := &state{a: a, url: u, part: part, algo: algo}
	if n := partSize(part); n > 0 {
		c.notice(a, "resuming from %s already in %s", humanBytes(n), part)
	}
	if err := c.checkSpace(a, filepath.Dir(part), a.ExpectedSize()-partSize(part)); err != nil {
		return nil, err
	}
	backoff := cmp0(c.Backoff, time.Second)
	for attempt := 1; ; attempt++ {
		err := c.attempt(ctx, st)
		if err == nil {
			return &download{url: u, size: st.done, sha: sum(st.sha), alt: sum(st.alt), resumed: st.resumed}, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("fetch: %s: %w (%s kept to resume)", a.Name, ctx.Err(), part)
		}
		if !retryable(err) || attempt >= c.attempts() {
			if attempt > 1 {
				err = fmt.Errorf("%w (after %d attempts)", err, attempt)
			}
			return nil, err
		}
		if errors.Is(err, errRestart) {
			c.notice(a, "%v", err)
			continue // at once: nothing is wrong with the server
		}
		c.notice(a, "attempt %d of %d failed: %v; next in %v", attempt, c.attempts(), err, backoff)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("fetch: %s: %w (%s kept to resume)", a.Name, ctx.Err(), part)
		case <-t.C:
		}
		backoff = min(2*backoff, cmp0(c.MaxBackoff, time.Minute))
	}
}

// retryable reports whether another attempt may succeed after err.
func retryable(err error) bool {
	var he *HTTPError
	if errors.As(err, &he) {
		return he.Temporary()
	}
	var (
		se  *SizeError
		spe *SpaceError
		we  *writeError
	)
	if errors.As(err, &se) || errors.As(err, &spe) || errors.As(err, &we) || errors.Is(err, ErrHTML) {
		return false
	}
	return true // network errors, stalls, cut connections, restarts
}

func (c *Client) checkSpace(a Asset, dir string, need int64) error {
	if need <= 0 {
		return nil
	}
	free := c.FreeSpace
	if free == nil {
		free = FreeSpace
	}
	n, err := free(dir)
	if err != nil {
		return nil // not measurable here: a full disk shows as a write error
	}
	if n < uint64(need) {
		return fmt.Errorf("%w (for %s)", &SpaceError{Dir: dir, Need: uint64(need), Free: n}, a.File)
	}
	return nil
}

// state is a download across attempts.
type state struct {
	a              Asset
	url, part      string
	algo           string
	sha, alt       hash.Hash
	done           int64
	noRange        bool // the server sent the wrong range: ask for all
	resumed        bool
	announcedTotal int64
}

// rehash hashes the first n bytes of f afresh.
func (st *state) rehash(f *os.File, n int64) error {
	st.sha, _ = newHash("sha256")
	st.alt = st.sha
	if st.algo != "" && st.algo != "sha256" {
		h, err := newHash(st.algo)
		if err != nil {
			return err
		}
		st.alt = h
	}
	st.done = 0
	if n == 0 {
		return nil
	}
	w := io.Writer(st.sha)
	if st.alt != st.sha {
		w = io.MultiWriter(st.sha, st.alt)
	}
	m, err := io.Copy(w, io.NewSectionReader(f, 0, n))
	st.done = m
	if err != nil {
		return fmt.Errorf("fetch: reading %s: %w", st.part, err)
	}
	return nil
}

func (st *state) hashWrite(b []byte) {
	st.sha.Write(b)
	if st.alt != st.sha {
		st.alt.Write(b)
	}
}

// attempt makes one request and appends what it receives to the .part
// file.
func (c *Client) attempt(ctx context.Context, st *state) (err error) {
	f, err := os.OpenFile(st.part, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return &writeError{err}
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = &writeError{cerr}
		}
	}()
	fi, err := f.Stat()
	if err != nil {
		return &writeError{err}
	}
	off := fi.Size()
	if st.noRange && off > 0 {
		if err := f.Truncate(0); err != nil {
			return &writeError{err}
		}
		off = 0
	}
	if err := st.rehash(f, off); err != nil {
		return err
	}

	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	stall := c.stall()
	var stalled atomic.Bool
	timer := time.AfterFunc(stall, func() { stalled.Store(true); cancel() })
	defer timer.Stop()
	stallErr := func(err error) error {
		timer.Stop()
		if stalled.Load() && ctx.Err() == nil {
			return &StallError{URL: st.url, After: stall}
		}
		return err
	}

	req, err := http.NewRequestWithContext(actx, http.MethodGet, st.url, nil)
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	req.Header.Set("User-Agent", cmpStr(c.UserAgent, "flycl-fetch"))
	if off > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(off, 10)+"-")
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return stallErr(fmt.Errorf("fetch: %w", err))
	}
	defer resp.Body.Close()
	total := int64(-1)
	switch {
	case resp.StatusCode == http.StatusOK:
		if off > 0 {
			if err := f.Truncate(0); err != nil {
				return &writeError{err}
			}
			off = 0
			st.rehash(f, 0)
			c.notice(st.a, "the server does not resume downloads: starting again from byte 0")
		}
		if resp.ContentLength >= 0 {
			total = resp.ContentLength
		}
	case resp.StatusCode == http.StatusPartialContent && off > 0:
		start, size, ok := contentRange(resp.Header.Get("Content-Range"))
		if !ok || start != off {
			st.noRange = true
			return fmt.Errorf("%w: asked for bytes from %d, the server sent %q", errRestart, off, resp.Header.Get("Content-Range"))
		}
		st.resumed = true
		total = size
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && off > 0:
		st.noRange = true
		return fmt.Errorf("%w: the server has no bytes after the %d of %s", errRestart, off, st.part)
	default:
		return &HTTPError{URL: st.url, Status: resp.StatusCode}
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/html") {
		return fmt.Errorf("%w (GET %s: %s); download it in a browser and put it at %s", ErrHTML, st.url, ct, strings.TrimSuffix(st.part, ".part"))
	}
	if total >= 0 && st.a.Size > 0 && total != st.a.Size {
		f.Close()
		os.Remove(st.part)
		return &SizeError{File: st.a.File, URL: st.url, Want: st.a.Size, Got: total}
	}
	if total >= 0 && st.a.Size == 0 {
		if err := c.checkSpace(st.a, filepath.Dir(st.part), total-off); err != nil {
			return err
		}
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return &writeError{err}
	}
	var w io.Writer = f
	if c.wrapWrite != nil {
		w = c.wrapWrite(f)
	}

	start, startOff := time.Now(), off
	var last time.Time
	report := func(force bool) {
		if c.Progress == nil {
			return
		}
		now := time.Now()
		if !force {
			if now.Sub(last) < 100*time.Millisecond {
				return
			}
			last = now
		}
		p := Progress{Asset: st.a.Name, File: st.a.File, Done: st.done, ETA: -1}
		if total >= 0 {
			p.Total = total
		}
		if el := now.Sub(start).Seconds(); el > 0 {
			p.Rate = float64(st.done-startOff) / el
			if p.Rate > 0 && total >= 0 {
				p.ETA = time.Duration(float64(total-st.done) / p.Rate * float64(time.Second))
			}
		}
		c.Progress(p)
	}
	report(true)
	buf := make([]byte, 256<<10)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			timer.Reset(stall)
			m, werr := w.Write(buf[:n])
			st.hashWrite(buf[:m])
			st.done += int64(m)
			if werr == nil && m < n {
				werr = io.ErrShortWrite
			}
			if werr != nil {
				f.Close()
				os.Remove(st.part) // the bytes on disk may not be what was hashed
				return &writeError{werr}
			}
			report(false)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			report(true)
			return stallErr(fmt.Errorf("fetch: GET %s: after %s: %w", st.url, humanBytes(st.done), rerr))
		}
	}
	timer.Stop()
	report(true)
	if total >= 0 && st.done != total {
		return fmt.Errorf("fetch: GET %s: %d of %d bytes", st.url, st.done, total)
	}
	if err := f.Sync(); err != nil {
		return &writeError{err}
	}
	return nil
}

// contentRange parses "bytes START-END/SIZE" (SIZE may be "*": -1).
func contentRange(s string) (start, size int64, ok bool) {
	s, ok = strings.CutPrefix(s, "bytes ")
	if !ok {
		return 0, 0, false
	}
	r, sz, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, false
	}
	a, b, ok := strings.Cut(r, "-")
	if !ok {
		return 0, 0, false
	}
	start, err1 := strconv.ParseInt(a, 10, 64)
	end, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || start < 0 || end < start {
		return 0, 0, false
	}
	size = -1
	if sz != "*" {
		n, err := strconv.ParseInt(sz, 10, 64)
		if err != nil || n <= end {
			return 0, 0, false
		}
		size = n
	}
	return start, size, true
}

func cmpStr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func partSize(p string) int64 {
	if st, err := os.Stat(p); err == nil {
		return st.Size()
	}
	return 0
}

// hashFile returns the SHA-256 of a file and its digest in algo ("" or
// "sha256": the SHA-256 again).
func hashFile(p, algo string) (sha, alt string, err error) {
	f, err := os.Open(p)
	if err != nil {
		return "", "", fmt.Errorf("fetch: %w", err)
	}
	defer f.Close()
	st := &state{part: p, algo: algo}
	fi, err := f.Stat()
	if err != nil {
		return "", "", fmt.Errorf("fetch: %w", err)
	}
	if err := st.rehash(f, fi.Size()); err != nil {
		return "", "", err
	}
	return sum(st.sha), sum(st.alt), nil
}

// syncDir makes a rename in dir durable (best effort).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
