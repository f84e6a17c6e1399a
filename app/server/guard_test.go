package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestCrossSite sends unsafe and safe requests with the headers browsers
// set (Origin, Sec-Fetch-Site) and the page's RequestHeader, to a server
// with and without a token: a request a browser marks as coming from
// another origin, or a browser request without the page's header, is
// refused with 403 and a JSON error, before the token is looked at; a
// request without browser headers (curl) and the page's own requests go
// through; safe methods are never refused. The truth is the rule as a
// browser applies it: origin = scheme, host and port.
func TestCrossSite(t *testing.T) {
	const host = "127.0.0.1:8080"
	own := "http://" + host
	feat := make([]float32, testDim)
	for _, token := range []string{"", "cross-site-token"} {
		s, _, _ := testServer(t, func(c *Config) { c.Token = token })
		h := s.Handler()
		r := rand.New(rand.NewPCG(1, 2))
		x, y := clusters(r, []int{0, 1}, 8)
		learn := func() []byte {
			return jsonBody(t, Request{Features: x[:2], Labels: []string{className(y[0]), className(y[1])}})
		}
		// a first learn, so that predicts and forgets have a model
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/v1/learn", bytes.NewReader(jsonBody(t, Request{Features: x, Labels: namesOf(y)})))
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("first learn: %d %s", rec.Code, rec.Body)
		}
		for _, tc := range []struct {
			name, method, path string
			headers            map[string]string // besides Host and the token
			want               int
		}{
			{"curl", "POST", "/v1/learn", nil, 200},
			{"own page", "POST", "/v1/learn", map[string]string{"Origin": own, "Sec-Fetch-Site": "same-origin", RequestHeader: "1"}, 200},
			{"own page, old browser", "POST", "/v1/learn", map[string]string{"Origin": own, RequestHeader: "1"}, 200},
			{"own origin without the header", "POST", "/v1/learn", map[string]string{"Origin": own, "Sec-Fetch-Site": "same-origin"}, 403},
			{"same-origin fetch without the header", "POST", "/v1/learn", map[string]string{"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors"}, 403},
			{"other port", "POST", "/v1/learn", map[string]string{"Origin": "http://127.0.0.1:9999", "Sec-Fetch-Site": "same-site", RequestHeader: "1"}, 403},
			{"other port, old browser", "POST", "/v1/learn", map[string]string{"Origin": "http://127.0.0.1:9999", RequestHeader: "1"}, 403},
			{"other site", "POST", "/v1/learn", map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, 403},
			{"cross-site with the header", "POST", "/v1/learn", map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site", RequestHeader: "1"}, 403},
			{"cross-site claiming our origin", "POST", "/v1/learn", map[string]string{"Origin": own, "Sec-Fetch-Site": "cross-site", RequestHeader: "1"}, 403},
			{"opaque origin", "POST", "/v1/learn", map[string]string{"Origin": "null", RequestHeader: "1"}, 403},
			{"user navigation", "POST", "/v1/learn", map[string]string{"Sec-Fetch-Site": "none", RequestHeader: "1"}, 200},
			{"cross-site predict", "POST", "/v1/predict", map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, 403},
			{"cross-site forget", "DELETE", "/v1/classes/alpha", map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site", RequestHeader: "1"}, 403},
			{"cross-site read", "GET", "/v1/model", map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, 200},
			{"cross-site preflight", "OPTIONS", "/v1/learn", map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, 405},
			{"own page forgets", "DELETE", "/v1/classes/alpha", map[string]string{"Origin": own, "Sec-Fetch-Site": "same-origin", RequestHeader: "1"}, 200},
		} {
			t.Run(fmt.Sprintf("token=%v/%s", token != "", tc.name), func(t *testing.T) {
				var body []byte
				switch tc.path {
				case "/v1/learn":
					body = learn()
				case "/v1/predict":
					body = jsonBody(t, Request{Features: [][]float32{feat}})
				}
				req := httptest.NewRequest(tc.method, tc.path, bytes.NewReader(body))
				req.Host = host
				if body != nil {
					req.Header.Set("Content-Type", "application/json")
				}
				if token != "" {
					req.Header.Set("Authorization", "Bearer "+token)
				}
				for k, v := range tc.headers {
					req.Header.Set(k, v)
				}
				v0 := s.View().Version()
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != tc.want {
					t.Fatalf("%s %s with %v: %d, want %d: %s", tc.method, tc.path, tc.headers, rec.Code, tc.want, rec.Body)
				}
				if tc.want == 403 {
					var e ErrorBody
					if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Status != 403 || rec.Header().Get("Content-Type") != "application/json" {
						t.Fatalf("error body %q (%v)", rec.Body, err)
					}
					if !strings.Contains(e.Error, "cross-site") && !strings.Contains(e.Error, RequestHeader) {
						t.Fatalf("error %q names neither the cross-site rule nor %s", e.Error, RequestHeader)
					}
					if v := s.View().Version(); v != v0 {
						t.Fatalf("a refused request changed the model: version %d -> %d", v0, v)
					}
				}
			})
		}
	}
}

func namesOf(y []int) []string {
	out := make([]string, len(y))
	for i, c := range y {
		out[i] = className(c)
	}
	return out
}

// TestHostAllowed: without a token the server answers only to IP
// addresses, localhost (and names under .localhost) and the names it is
// given, so a page whose name was pointed at it (DNS rebinding) is
// refused, even for a read; with a token every name is served.
func TestHostAllowed(t *testing.T) {
	for _, tc := range []struct {
		host  string
		names []string
		want  bool
	}{
		{"127.0.0.1:8080", nil, true}, {"127.0.0.1", nil, true}, {"[::1]:8080", nil, true}, {"::1", nil, true},
		{"10.1.2.3:80", nil, true}, {"[fe80::1%eth0]:8080", nil, true}, {"localhost:8080", nil, true}, {"LOCALHOST", nil, true}, {"localhost.:1", nil, true},
		{"cam.localhost:8080", nil, true}, {"evil.example:8080", nil, false}, {"evil.example", nil, false},
		{"localhost.evil.example", nil, false}, {"127.0.0.1.nip.io:8080", nil, false}, {"", nil, false},
		{"box.lan:8080", []string{"box.lan"}, true}, {"BOX.LAN.", []string{"box.lan"}, true}, {"other.lan", []string{"box.lan"}, false},
	} {
		if got := hostAllowed(tc.host, tc.names); got != tc.want {
			t.Errorf("hostAllowed(%q, %q) = %v, want %v", tc.host, tc.names, got, tc.want)
		}
	}
	for _, tc := range []struct {
		token, host string
		hosts       []string
		want        int
	}{
		{"", "evil.example:8080", nil, 403}, {"", "box.lan:8080", []string{"box.lan"}, 200},
		{"", "127.0.0.1:8080", nil, 200}, {"host-token-123", "evil.example:8080", nil, 200},
	} {
		s, _, _ := testServer(t, func(c *Config) { c.Token = tc.token; c.Hosts = tc.hosts })
		for _, path := range []string{"/", "/v1/model", "/metrics"} {
			req := httptest.NewRequest("GET", path, nil)
			req.Host = tc.host
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Errorf("token %q, Hosts %q: GET %s for %s: %d, want %d: %.200s", tc.token, tc.hosts, path, tc.host, rec.Code, tc.want, rec.Body)
			}
			if tc.want == 403 && !strings.Contains(rec.Body.String(), "host name") {
				t.Errorf("refusal %q does not name the host", rec.Body)
			}
		}
	}
}

// TestBodyBudget holds two uploads open that have sent most of the
// decoding budget: a third large request is refused with 503 and
// Retry-After as soon as its bytes go over the budget, a small predict
// still goes through, the two uploads finish with 200, and the budget is
// all given back.
func TestBodyBudget(t *testing.T) {
	const limit = 256 << 10 // MaxBodyBytes; the budget is twice it
	s, hs, _ := testServer(t, func(c *Config) { c.MaxBodyBytes = limit })
	if s.cfg.MaxDecodeBytes != 2*limit {
		t.Fatalf("default MaxDecodeBytes %d, want 2×MaxBodyBytes = %d", s.cfg.MaxDecodeBytes, 2*limit)
	}
	r := rand.New(rand.NewPCG(7, 8))
	x, y := clusters(r, []int{0, 1}, 8)
	learnFeatures(t, hs.URL, "", x, y)
	// rows of testDim values written as 0.000000 (9 bytes a value)
	row := "[" + strings.TrimSuffix(strings.Repeat("0.0000000,", testDim), ",") + "]"
	rowsFor := func(bytes int) string {
		n := bytes / (len(row) + 1)
		return strings.TrimSuffix(strings.Repeat(row+",", n), ",")
	}
	type upload struct {
		w    *io.PipeWriter
		code chan int
	}
	var ups []upload
	sent := int64(0)
	for range 2 {
		pr, pw := io.Pipe()
		req, err := http.NewRequest("POST", hs.URL+"/v1/predict", pr)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		u := upload{w: pw, code: make(chan int, 1)}
		t.Cleanup(func() { pw.CloseWithError(io.ErrUnexpectedEOF) })
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				u.code <- 0
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			u.code <- resp.StatusCode
		}()
		head := `{"features": [` + rowsFor(limit*7/8) + ","
		if _, err := io.WriteString(pw, head); err != nil {
			t.Fatal(err)
		}
		sent += int64(len(head))
		ups = append(ups, u)
	}
	// No deadline: the server reads what was sent (a test that hangs
	// fails at go test's -timeout).
	for s.bodies.inUse() < sent {
		time.Sleep(time.Millisecond)
	}
	left := s.cfg.MaxDecodeBytes - s.bodies.inUse()
	big := []byte(`{"features": [` + rowsFor(int(left)+limit/8) + `]}`)
	code, h, b := do(t, "POST", hs.URL+"/v1/predict", "application/json", big, "", nil)
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || !strings.Contains(string(b), "at once") {
		t.Fatalf("a request beyond the budget (%d bytes left): %d %q %s", left, code, h.Get("Retry-After"), b)
	}
	small := jsonBody(t, Request{Features: [][]float32{make([]float32, testDim)}})
	if int64(len(small)) >= left {
		t.Fatalf("test setup: %d bytes left, the small predict has %d", left, len(small))
	}
	if code, _, b := do(t, "POST", hs.URL+"/v1/predict", "application/json", small, "", nil); code != 200 {
		t.Fatalf("small predict beside the uploads: %d %s", code, b)
	}
	for _, u := range ups {
		io.WriteString(u.w, row+"]}")
		u.w.Close()
		if c := <-u.code; c != 200 {
			t.Fatalf("upload: %d", c)
		}
	}
	if n := s.bodies.inUse(); n != 0 {
		t.Fatalf("%d bytes of the budget still held after every request was answered", n)
	}
}
