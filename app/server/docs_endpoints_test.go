package server

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flycl/flycl/app/inbox"
)

// routed reports whether the server has a handler for method on path: an
// answer that is neither "no such endpoint" (404 from the API or the
// page) nor "method not allowed" (405). Bodies are empty, so a routed
// change answers 400 (or 404 for an item that does not exist).
func routed(t *testing.T, url, method, path string) (bool, int, string) {
	code, _, body := do(t, method, url+path, "application/json", nil, "", nil)
	switch {
	case code == http.StatusMethodNotAllowed:
		return false, code, string(body)
	case code == http.StatusNotFound && (strings.Contains(string(body), "no such endpoint") || strings.Contains(string(body), "404 page not found")):
		return false, code, string(body)
	}
	return true, code, string(body)
}

// TestDocsEndpointsExist: every "METHOD /v1/..." that README.md and docs/
// name is an endpoint of the server (an inbox server, so that the inbox's
// endpoints are there), with the method named. A path that ends in "/"
// or has a {placeholder} is tried with a made-up item. A made-up endpoint
// is refused, so the check can fail.
func TestDocsEndpointsExist(t *testing.T) {
	_, url, _ := inboxServer(t, inbox.Options{}, nil)
	if ok, code, body := routed(t, url, "GET", "/v1/no-such-endpoint"); ok {
		t.Fatalf("GET /v1/no-such-endpoint answered %d %s: the check cannot tell a missing endpoint", code, body)
	}
	if ok, code, body := routed(t, url, "DELETE", "/v1/model"); ok {
		t.Fatalf("DELETE /v1/model answered %d %s: the check cannot tell a missing method", code, body)
	}
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, filepath.Join("..", "..", "README.md"))
	re := regexp.MustCompile(`\b(GET|POST|PUT|DELETE|PATCH) (/v1/[A-Za-z0-9_/{}.-]*)`)
	placeholder := regexp.MustCompile(`\{[^}]*\}`)
	seen := map[string]bool{}
	for _, path := range docs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			method, p := m[1], strings.TrimSuffix(m[2], ".")
			p = placeholder.ReplaceAllString(p, "item")
			if strings.HasSuffix(p, "/") {
				p += "item"
			}
			key := method + " " + p
			if seen[key] {
				continue
			}
			seen[key] = true
			if ok, code, body := routed(t, url, method, p); !ok {
				t.Errorf("%s names %s %s: the server answers %d %s", filepath.Base(path), method, m[2], code, strings.TrimSpace(body))
			}
		}
	}
	if len(seen) < 10 {
		t.Errorf("found only %d endpoints in the docs: the scan does not see them", len(seen))
	}
	t.Logf("%d endpoints checked", len(seen))
}
