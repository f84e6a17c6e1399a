package server

import (
	"context"
	"fmt"
	"image/color"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// seenRequest is a request as the server answered it.
type seenRequest struct {
	method, path, origin, site string
	header                     bool // RequestHeader sent
	code                       int
}

// requestLog records every request the server answers.
type requestLog struct {
	h    http.Handler
	mu   sync.Mutex
	seen []seenRequest
}

func (l *requestLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sw := &statusWriter{ResponseWriter: w}
	l.h.ServeHTTP(sw, r)
	l.mu.Lock()
	l.seen = append(l.seen, seenRequest{r.Method, r.URL.Path, r.Header.Get("Origin"), r.Header.Get("Sec-Fetch-Site"),
		r.Header.Get(RequestHeader) != "", sw.code})
	l.mu.Unlock()
}

func (l *requestLog) from(origin string) []seenRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []seenRequest
	for _, s := range l.seen {
		if s.origin == origin {
			out = append(out, s)
		}
	}
	return out
}

// attackPage is a page of another origin that tries to teach the server
// at target and make it forget "alpha", in every way a page can send a
// request without the server's consent: a no-cors multipart fetch (a
// "simple" request, sent without a preflight), a form posted into an
// iframe, and fetches that need a preflight (a DELETE, a custom header).
// It cannot read the answers; the server's log says what arrived.
const attackPage = `<!doctype html><meta charset="utf-8"><title>another site</title><body><script>
"use strict";
const target = %q;
window.results = [];
async function attempt(name, f) {
  try { await f(); results.push(name + ": sent"); } catch (e) { results.push(name + ": " + e); }
}
(async () => {
  const c = document.createElement("canvas");
  c.width = 16; c.height = 16;
  const g = c.getContext("2d");
  g.fillStyle = "#10e010"; g.fillRect(0, 0, 16, 16);
  const blob = await new Promise((r) => c.toBlob(r, "image/png"));
  const fd = (label) => { const f = new FormData(); f.append("image", blob, "x.png"); f.append("label", label); return f; };
  await attempt("no-cors learn", () => fetch(target + "/v1/learn", { method: "POST", mode: "no-cors", body: fd("evil") }));
  await attempt("no-cors learn with credentials", () => fetch(target + "/v1/learn", { method: "POST", mode: "no-cors", body: fd("evil"), credentials: "include" }));
  await attempt("no-cors forget", () => fetch(target + "/v1/classes/alpha", { method: "DELETE", mode: "no-cors" }));
  await attempt("cors forget", () => fetch(target + "/v1/classes/alpha", { method: "DELETE" }));
  await attempt("cors learn with the page's header", () => fetch(target + "/v1/learn", { method: "POST", body: fd("evil"), headers: { "X-Flycl-Request": "1" } }));
  const sink = document.createElement("iframe");
  sink.name = "sink";
  document.body.appendChild(sink);
  const form = document.createElement("form");
  form.method = "POST"; form.action = target + "/v1/learn"; form.enctype = "multipart/form-data"; form.target = "sink";
  const file = document.createElement("input");
  file.type = "file"; file.name = "image";
  const dt = new DataTransfer();
  dt.items.add(new File([blob], "x.png", { type: "image/png" }));
  file.files = dt.files;
  const label = document.createElement("input");
  label.name = "label"; label.value = "evil-form";
  form.append(file, label);
  document.body.appendChild(form);
  await new Promise((r) => { sink.onload = r; form.submit(); });
  results.push("form learn: submitted");
  window.done = true;
})();
</script>`

// TestBrowserCrossSite: pages of another origin (127.0.0.1 on another
// port, which the browser calls same-site, and localhost, cross-site) can
// neither teach the server nor make it forget, with or without a token:
// every request of theirs that reaches the server is refused with 403
// (before the token is looked at), and the model is unchanged. The
// server's own page still teaches and forgets, a fetch of the page's own
// origin without its header is refused, and a client that is not a
// browser (Go's, as curl) still learns, with the token when there is one.
// Without a token, the server's own page opened by a name pointed at
// 127.0.0.1 (DNS rebinding, which makes an attacker's page same-origin
// to the server) is refused for its Host, and so is its learn.
func TestBrowserCrossSite(t *testing.T) {
	browser := newBrowser(t, 1100, 820,
		// a name an attacker has pointed at this machine (DNS rebinding)
		chromedp.Flag("host-resolver-rules", "MAP rebound.test 127.0.0.1"))
	// tab opens a new tab, closed at the end of the (sub)test: each page
	// has a tab of its own, so no step runs in a page that another
	// navigation is replacing.
	tab := func(t *testing.T) context.Context {
		ctx, cancel := chromedp.NewContext(browser)
		t.Cleanup(cancel)
		if err := chromedp.Do(ctx); err != nil {
			t.Fatalf("open a tab: %v", err)
		}
		return ctx
	}
	dir := t.TempDir()
	var own []string
	for i := range 3 {
		p := filepath.Join(dir, fmt.Sprintf("own%d.png", i))
		if err := os.WriteFile(p, pngOf(t, 32, 24, color.RGBA{240, 200, 20, 255}, uint64(i)), 0o644); err != nil {
			t.Fatal(err)
		}
		own = append(own, p)
	}
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(0))
	}
	for _, token := range []string{"", "browser-test-token"} {
		t.Run(fmt.Sprintf("token=%v", token != ""), func(t *testing.T) {
			s, err := New(Config{Backend: newFileBackend(t, filepath.Join(t.TempDir(), "m.flycl")), Extractor: gridExtractor{},
				Token: token, Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			log := &requestLog{h: s.Handler()}
			hs := httptest.NewServer(log)
			defer hs.Close()
			x, y := clusters(rand.New(rand.NewPCG(3, 4)), []int{0, 1}, 12)
			learnFeatures(t, hs.URL, token, x, y) // version 1: alpha and beta
			classes := func() []string {
				var names []string
				for _, c := range s.View().Classes() {
					names = append(names, c.Name)
				}
				return names
			}
			before := classes()

			for _, host := range []string{"127.0.0.1", "localhost"} {
				evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "text/html; charset=utf-8")
					fmt.Fprintf(w, attackPage, hs.URL)
				}))
				evilURL := strings.Replace(evil.URL, "127.0.0.1", host, 1)
				ctx := tab(t)
				if err := chromedp.Do(ctx, chromedp.Navigate(evilURL+"/"), poll(`window.done === true`)); err != nil {
					t.Fatalf("attack page at %s: %v", evilURL, err)
				}
				results, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.results`))
				if err != nil {
					t.Fatal(err)
				}
				evil.Close()
				t.Logf("page at %s: %q", evilURL, results)
				seen := log.from(evilURL)
				changes := 0
				for _, r := range seen {
					if r.method == "OPTIONS" {
						if r.code < 300 {
							t.Errorf("page at %s: preflight %s answered %d", evilURL, r.path, r.code)
						}
						continue
					}
					changes++
					if r.code != http.StatusForbidden {
						t.Errorf("page at %s: %s %s (Sec-Fetch-Site %q) answered %d, want 403", evilURL, r.method, r.path, r.site, r.code)
					}
				}
				// The no-cors fetches and the form reach the server: the
				// refusal is the server's, not the browser's.
				if changes < 3 {
					t.Errorf("page at %s: only %d of its changes reached the server (%+v); the test proves nothing", evilURL, changes, seen)
				}
				if got := classes(); !slices.Equal(got, before) || s.View().Version() != 1 {
					t.Fatalf("after the page at %s: classes %q, version %d; want %q, version 1", evilURL, got, s.View().Version(), before)
				}
			}

			// A page whose name was pointed at this server's address is
			// same-origin to the server: without a token, its Host refuses it.
			if token == "" {
				rebound := strings.Replace(hs.URL, "127.0.0.1", "rebound.test", 1)
				ctx := tab(t)
				if err := chromedp.Do(ctx, chromedp.Navigate(rebound+"/")); err != nil {
					t.Fatalf("open %s: %v", rebound, err)
				}
				body, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.textContent`))
				if err != nil || !strings.Contains(body, "host name") {
					t.Fatalf("page at %s: %q %v, want a refusal naming the host", rebound, body, err)
				}
				code, err := chromedp.Run(ctx, chromedp.Evaluate[int](`fetch("/v1/learn", { method: "POST", headers: { "X-Flycl-Request": "1", "Content-Type": "application/json" },
					body: JSON.stringify({ features: [[0,0,0,0,0,0,0,0,0,0,0,0]], label: "rebound" }) }).then((r) => r.status)`, chromedp.EvalAwaitPromise))
				if err != nil || code != http.StatusForbidden || s.View().Version() != 1 {
					t.Fatalf("learn from %s: %d %v, version %d; want 403 and version 1", rebound, code, err, s.View().Version())
				}
			}

			// The server's own page teaches and forgets.
			ctx := tab(t)
			step := func(name string, actions ...chromedp.Action[chromedp.Void]) {
				t.Helper()
				if err := chromedp.Do(ctx, actions...); err != nil {
					st, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("status").textContent`))
					t.Fatalf("%s: %v (page status %q)", name, err, st)
				}
			}
			step("open the page", chromedp.Navigate(hs.URL+"/"), poll(`document.getElementById("version").textContent === "1"`))
			if token != "" {
				step("type the token", chromedp.SetValue(chromedp.CSS("#token"), token))
			}
			step("teach", chromedp.SetUploadFiles(chromedp.CSS("#files"), own),
				chromedp.WaitEnabled(chromedp.CSS("#teach")),
				chromedp.SetValue(chromedp.CSS("#label"), "own"),
				chromedp.Evaluate[chromedp.Void](`document.getElementById("teach").click()`),
				poll(`document.getElementById("status").textContent.startsWith("learned")`))
			if !slices.Contains(classes(), "own") {
				t.Fatalf("the page's learn: classes %q", classes())
			}
			forgot, err := chromedp.Run(ctx, chromedp.Evaluate[string](`call("DELETE", "/v1/classes/beta").then((j) => j.forgot, (e) => "error: " + e.message)`, chromedp.EvalAwaitPromise))
			if err != nil || forgot != "beta" || slices.Contains(classes(), "beta") {
				t.Fatalf("the page's forget: %q %v; classes %q", forgot, err, classes())
			}
			// The page's origin without the page's header: refused.
			code, err := chromedp.Run(ctx, chromedp.Evaluate[int](`(() => {
				const f = new FormData();
				f.append("label", "bare");
				const h = {};
				const t = document.getElementById("token").value;
				if (t) h["Authorization"] = "Bearer " + t;
				return fetch("/v1/learn", { method: "POST", body: f, headers: h }).then((r) => r.status);
			})()`, chromedp.EvalAwaitPromise))
			if err != nil || code != http.StatusForbidden {
				t.Fatalf("same-origin fetch without %s: %d %v, want 403", RequestHeader, code, err)
			}

			// A client that is not a browser, as curl: learns with the
			// token, and without it only when there is none.
			x, y = clusters(rand.New(rand.NewPCG(5, 6)), []int{4}, 4)
			if token != "" {
				if c, _, b := do(t, "POST", hs.URL+"/v1/learn", "application/json", jsonBody(t, Request{Features: x, Label: "epsilon"}), "", nil); c != http.StatusUnauthorized {
					t.Fatalf("learn without the token: %d %s", c, b)
				}
			}
			learnFeatures(t, hs.URL, token, x, y)
			if !slices.Contains(classes(), "epsilon") {
				t.Fatalf("learn from a Go client: classes %q", classes())
			}
		})
	}
}
