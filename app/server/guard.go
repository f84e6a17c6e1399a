package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/flycl/flycl/app/server/api"
)

// RequestHeader is the header the server's web page sends with every API
// request (api.RequestHeader, which says why): a browser request that may
// change something is refused without it.
const RequestHeader = api.RequestHeader

// crossSiteCheck refuses unsafe browser requests that do not come from the
// server's own page: marked cross-site or same-site by the browser
// (Sec-Fetch-Site), or from another origin than the Host asked for
// (net/http's CrossOriginProtection), or, from a browser, without
// RequestHeader. Requests without any browser header are let through (the
// token, when there is one, still guards changes).
func crossSiteCheck(cop *http.CrossOriginProtection, r *http.Request) *apiError {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	if err := cop.Check(r); err != nil {
		from := r.Header.Get("Origin")
		if from == "" {
			from = "another site (Sec-Fetch-Site: " + r.Header.Get("Sec-Fetch-Site") + ")"
		}
		return errorf(http.StatusForbidden, "cross-site request refused: a %s from %s to %s; only this server's own page (or a client that is not a browser) may send it",
			r.Method, from, r.Host)
	}
	if fromBrowser(r) && r.Header.Get(RequestHeader) == "" {
		return errorf(http.StatusForbidden, "browser request without the %s header refused: a %s from a browser must come from this server's own page, which sends it",
			RequestHeader, r.Method)
	}
	return nil
}

// fromBrowser reports whether a request carries headers only browsers set.
func fromBrowser(r *http.Request) bool {
	for _, h := range []string{"Origin", "Sec-Fetch-Site", "Sec-Fetch-Mode", "Sec-Fetch-Dest"} {
		if _, ok := r.Header[h]; ok {
			return true
		}
	}
	return false
}

// hostAllowed reports whether a server without a token answers a request
// for host (the Host header, with or without a port): an IP address,
// localhost or a name under .localhost, or one of names. A web page whose
// own name an attacker points at this server's address (DNS rebinding) is
// same-origin to itself, so only its Host header tells it apart.
func hostAllowed(host string, names []string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
	if h == "" {
		return false
	}
	if _, err := netip.ParseAddr(h); err == nil || h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	return slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(strings.TrimSuffix(n, "."), h) })
}

// budget is a count of bytes shared by the requests being read at once.
type budget struct {
	mu        sync.Mutex
	used, max int64
}

// take adds n bytes to the held ones, or, when fewer are left, gives
// back the held ones too and reports false: a request refused for the
// budget lets the others go on at once.
func (b *budget) take(n int64, held *int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max {
		b.used -= *held
		*held = 0
		return false
	}
	b.used += n
	*held += n
	return true
}

// give returns n bytes taken before.
func (b *budget) give(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// inUse returns the bytes reserved now.
func (b *budget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// budgetChunk is the most a budgetReader reads at once.
const budgetChunk = 64 << 10

// budgetReader is a request body whose bytes count against the server's
// decoding budget as they are read, until release: a slow upload holds
// only what it has sent. A read that goes beyond the budget fails with a
// *BudgetError (the request gets 503 with Retry-After) and gives back
// every byte the request held, so the requests still being read go on.
// (The bytes of that last read are in the caller's buffer, allocated
// already; what the budget bounds is what the requests keep.)
type budgetReader struct {
	r      io.ReadCloser
	b      *budget
	held   int64
	failed bool
}

func (br *budgetReader) Read(p []byte) (int, error) {
	if br.failed {
		return 0, &BudgetError{Limit: br.b.max}
	}
	n, err := br.r.Read(p[:min(len(p), budgetChunk)])
	if n > 0 && !br.b.take(int64(n), &br.held) {
		br.failed = true
		return 0, &BudgetError{Limit: br.b.max}
	}
	return n, err
}

func (br *budgetReader) Close() error { return br.r.Close() }

// release gives back every byte read.
func (br *budgetReader) release() {
	br.b.give(br.held)
	br.held = 0
}

// BudgetError is the error of reading a request body beyond the bytes the
// server reads at once (Config.MaxDecodeBytes).
type BudgetError struct{ Limit int64 }

func (e *BudgetError) Error() string {
	return fmt.Sprintf("too many request bytes being read at once (the limit is %d bytes for all requests together); retry later", e.Limit)
}

// bodyError returns the error of a body reader that is the client's limit
// (a body over MaxBodyBytes, or the decoding budget spent), or nil.
func bodyError(err error) error {
	var mbe *http.MaxBytesError
	var be *BudgetError
	switch {
	case errors.As(err, &mbe):
		return mbe
	case errors.As(err, &be):
		return be
	}
	return nil
}
