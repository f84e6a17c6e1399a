package server

import (
	"bytes"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzReadInput fuzzes the request parsers (JSON, multipart, base64,
// image headers and decoding) directly, seeded with every body of
// TestBadRequests. Every input either parses, to n samples of exactly d
// finite features with labels that pass the learn checks, or is refused
// with a client error (an apiError of status 4xx, a body over the limit,
// or an InputError), never a panic or a server error.
func FuzzReadInput(f *testing.F) {
	for _, tc := range badRequests(f) {
		if tc.body != nil || tc.ctype != "" {
			f.Add(tc.ctype, tc.body, tc.path == "/v1/learn")
		}
	}
	// the streaming JSON decoder's own cases (d = 3 there; here d = 12)
	ok, bad := jsonCases(f)
	for _, b := range ok {
		f.Add("application/json", b, false)
	}
	for _, b := range bad {
		f.Add("application/json", []byte(b.body), true)
	}
	s, err := New(Config{Backend: newFileBackend(f, f.TempDir()+"/m.flycl"), Extractor: gridExtractor{},
		MaxBodyBytes: 64 << 10, MaxPixels: 1000, MaxImages: 3})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	f.Fuzz(func(t *testing.T, ctype string, body []byte, learn bool) {
		req := httptest.NewRequest("POST", "/v1/predict", bytes.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		rec := httptest.NewRecorder()
		req.Body = http.MaxBytesReader(rec, req.Body, s.cfg.MaxBodyBytes)
		var check func(*input) error
		if learn {
			check = checkLabels
		}
		in, err := s.readInput(req, testDim, check)
		if err != nil {
			var ae *apiError
			var mbe *http.MaxBytesError
			var ie *InputError
			switch {
			case errors.As(err, &ae):
				if ae.code < 400 || ae.code >= 500 || ae.msg == "" {
					t.Fatalf("apiError %d %q", ae.code, ae.msg)
				}
			case errors.As(err, &mbe), errors.As(err, &ie):
			default:
				t.Fatalf("not a client error: %T %v", err, err)
			}
			return
		}
		if in.n <= 0 || len(in.x) != in.n*testDim {
			t.Fatalf("%d samples with %d feature values, d=%d", in.n, len(in.x), testDim)
		}
		for i, v := range in.x {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("feature %d is %v", i, v)
			}
		}
		if learn && checkLabels(in) != nil {
			t.Fatalf("learn input with bad labels %q", in.labels)
		}
		if in.images > 3 {
			t.Fatalf("%d images, the limit is 3", in.images)
		}
	})
}
